/** What raised a code: see ./helpers.mjs. */
export type When = "construction" | "registration" | "request" | "call";

/** A code's entry in the catalogue (./index.mjs). */
export interface ErrorEntry {
  code: string;
  pkg: string;
  raiser: string;
  when: When;
  refused: string;
  accepted: string;
  fix: string;
  wrong: string;
  right: string;
}

export declare const WHEN: Record<When, string>;
export declare function catalogue(): Map<string, ErrorEntry>;

/** The modules the examples import besides the packages, by file name. */
export declare const support: Record<string, string>;

/** Codes named but not thrown, each with the codes thrown instead. */
export declare const notThrown: Record<string, { instead: string[]; why: string }>;
