import { HttpError } from "@svc/kernel";
import { checkOptionNames } from "@svc/kernel/internal";
import { because } from "./diagnostics.js";
import { refused } from "./options.js";

/** The bounds of an `application/x-www-form-urlencoded` body (`form` of `parseBody`). */
export interface FormBodyOptions {
  /**
   * Most name/value pairs accepted; more → 400 (`too-many-pairs`), counted before any is decoded.
   * @default 1000 (body-parser's `parameterLimit`)
   */
  maxPairs?: number;
  /**
   * Longest accepted name, in UTF-8 bytes once percent-decoded; longer → 400 (`key-too-long`).
   * @default 1024
   */
  maxKeyBytes?: number;
  /**
   * Longest accepted value, in UTF-8 bytes once percent-decoded; longer → 400 (`value-too-long`).
   * @default 65536
   */
  maxValueBytes?: number;
}

/** {@link FormBodyOptions} resolved. */
export interface FormConfig {
  readonly maxPairs: number;
  readonly maxKeyBytes: number;
  readonly maxValueBytes: number;
}

/** A parsed form: each name once, its value a string, or the list of them when repeated. */
export type FormValue = Record<string, string | string[]>;

const FORM_OPTIONS = ["maxPairs", "maxKeyBytes", "maxValueBytes"] as const;

/** The `form` option of `parseBody`, checked once. */
export function resolveFormConfig(value: unknown): FormConfig {
  if (value === undefined) value = {};
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    throw refused("parseBody", "form", value, "{ maxPairs?, maxKeyBytes?, maxValueBytes? }");
  }
  checkOptionNames("negotiate", value, FORM_OPTIONS, "parseBody", "form");
  const given = value as Record<string, unknown>;
  const bound = (name: (typeof FORM_OPTIONS)[number], fallback: number): number => {
    const v = given[name] ?? fallback;
    if (typeof v !== "number" || !Number.isSafeInteger(v) || v < 1) {
      throw refused("parseBody", `form.${name}`, v, "a positive integer");
    }
    return v;
  };
  return {
    maxPairs: bound("maxPairs", 1000),
    maxKeyBytes: bound("maxKeyBytes", 1024),
    maxValueBytes: bound("maxValueBytes", 65_536),
  };
}

const encoder = new TextEncoder();

function refusal(message: string, reason: string): HttpError {
  return because(HttpError.badRequest(`Form body: ${message}`, { code: "malformed_body" }), reason);
}

/**
 * An `application/x-www-form-urlencoded` body (the URL Standard §5.1, the parser `URLSearchParams`
 * uses: `+` is a space, percent-escapes are UTF-8) as a plain object. Names are taken as they
 * are: `a[b]=1` is the name `a[b]`, never an object `a` (no nesting, so no depth to bound); a
 * repeated name gives the list of its values in order. Every name is an own property, defined
 * rather than assigned: `__proto__`, `constructor` and `prototype` are fields like any other,
 * and no prototype is reached. The count of pairs is checked on the raw text before anything is
 * decoded.
 *
 * @see https://url.spec.whatwg.org/#urlencoded-parsing
 */
export function parseFormBody(source: string, config: FormConfig): FormValue {
  // §5.1 step 1: "Let sequences be the result of splitting input on 0x26 (&)", empty ones skipped.
  let pairs = 0;
  for (let at = 0; at <= source.length; ) {
    const end = source.indexOf("&", at);
    const stop = end === -1 ? source.length : end;
    if (stop > at && ++pairs > config.maxPairs) {
      throw refusal(`more than ${config.maxPairs} name/value pairs are not accepted`, "too-many-pairs");
    }
    at = stop + 1;
  }
  const form: FormValue = {};
  for (const [name, value] of new URLSearchParams(source)) {
    if (encoder.encode(name).byteLength > config.maxKeyBytes) {
      throw refusal(`a name longer than ${config.maxKeyBytes} bytes is not accepted`, "key-too-long");
    }
    if (encoder.encode(value).byteLength > config.maxValueBytes) {
      throw refusal(`a value longer than ${config.maxValueBytes} bytes is not accepted`, "value-too-long");
    }
    const had = Object.hasOwn(form, name) ? form[name] : undefined;
    if (Array.isArray(had)) had.push(value);
    else {
      const field = had === undefined ? value : [had, value];
      Object.defineProperty(form, name, {
        value: field,
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
  }
  return form;
}
