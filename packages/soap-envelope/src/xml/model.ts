import type { XmlElement } from "@svc/errors";
import { optionError } from "../options.js";
import { trimXml } from "./space.js";

// What every part of the reader shares: the element it builds, the limits, the error, the
// source and the parse that may stop. No parsing here.

// The plain element shape is shared with @svc/auth, so it lives in @svc/errors (no parser there).
export type { XmlElement };

/** An element as the parser builds it: the public shape plus what schema processing needs. */
export interface ParsedElement extends XmlElement {
  children: ParsedElement[];
  /** In-scope namespace bindings (prefix → URI; `""` is the default namespace), for QName values. */
  readonly scope: Readonly<Record<string, string>>;
  /** Whether non-whitespace text appeared between child elements (mixed content). */
  mixed: boolean;
}

/**
 * Limits applied while parsing a document, before any of it is trusted.
 *
 * @example parseEnvelope(buffer, { maxBytes: 64 * 1024, maxDepth: 32 })
 */
export interface XmlLimits {
  /**
   * Largest document accepted, in bytes.
   * @default 1_048_576 (1 MiB)
   */
  maxBytes?: number;
  /**
   * Deepest element nesting accepted.
   * @default 64
   */
  maxDepth?: number;
  /**
   * Most attributes (namespace declarations included) on one element.
   * @default 64
   */
  maxAttributes?: number;
  /**
   * Most elements in one document.
   * @default 100_000
   */
  maxElements?: number;
  /**
   * Most namespace declarations in scope at once (on an element and its ancestors). Every
   * prefixed name is looked up among them, so without a bound a message could nest thousands of
   * declarations and make each of its elements pay for all of them.
   * @default 128
   */
  maxNamespaces?: number;
  /**
   * Most header blocks (child elements of a SOAP `env:Header`). Without a bound, a message within
   * every other limit could carry tens of thousands of blocks, each parsed, checked for
   * `mustUnderstand` and handed to the `authenticate` hook; past the limit the message is refused
   * with an `env:Sender` fault as the block opens, before the rest is parsed.
   * @default 64
   */
  maxHeaderBlocks?: number;
  /**
   * Most bytes that SOAP-encoded references (`href="#id"`, `enc:ref`) may copy into the values
   * they refer from, counted across the whole message: each copy counts the serialized size of
   * the element it copies. Without a bound, 600 references to one 40 KB string in a 50 KB
   * request made a 24 MB value (and response); past it the message is refused with the
   * `env:Sender` (SOAP 1.1: `Client`) fault that `maxElements` gives. Only operations bound
   * `use="encoded"` copy anything.
   * @default 4 × maxBytes (a value read is at most five times the largest message)
   */
  maxExpandedBytes?: number;
}

/** Limits with every default applied. */
export type ResolvedXmlLimits = Required<XmlLimits>;

/** Resolves and validates limits once. */
export function resolveLimits(limits: XmlLimits = {}): ResolvedXmlLimits {
  const out: ResolvedXmlLimits = {
    maxBytes: limits.maxBytes ?? 1_048_576,
    maxDepth: limits.maxDepth ?? 64,
    maxAttributes: limits.maxAttributes ?? 64,
    maxElements: limits.maxElements ?? 100_000,
    maxNamespaces: limits.maxNamespaces ?? 128,
    maxHeaderBlocks: limits.maxHeaderBlocks ?? 64,
    maxExpandedBytes:
      limits.maxExpandedBytes ?? Math.min(4 * (limits.maxBytes ?? 1_048_576), Number.MAX_SAFE_INTEGER),
  };
  for (const [key, value] of Object.entries(out)) {
    if (!Number.isSafeInteger(value) || value < 1)
      throw optionError(`limits.${key}`, value, "a positive integer");
  }
  return out;
}

/** Why a document was refused; `kind` decides the fault or status it becomes. */
export class XmlError extends Error {
  readonly kind: "malformed" | "too-large" | "timeout" | "limit" | "dtd" | "pi" | "encoding";
  /**
   * For a document that is not well-formed: where (1-based line and column) and what the parser
   * found, without a subject (`unexpected end`), so a caller can speak of its own document.
   */
  readonly position: { line: number; column: number; problem: string } | undefined;
  constructor(
    kind: XmlError["kind"],
    message: string,
    position?: { line: number; column: number; problem: string },
  ) {
    super(message);
    this.name = "XmlError";
    this.kind = kind;
    this.position = position;
  }
}

/** Source of a document: one buffer or string, or a stream of buffers (an `IncomingMessage`). */
export type XmlSource = string | Uint8Array | AsyncIterable<Uint8Array | string>;

/** A parse that may have stopped at an {@link XmlCheckpoint}. */
export interface XmlParse {
  /** The document element: complete when `rest` is undefined, else up to where the parse stopped. */
  root: ParsedElement;
  /**
   * Parses the rest of a stopped document (throwing {@link XmlError} as the parse would have) and
   * returns the complete document element: `root` completed, or a new tree equal to it in what
   * was parsed before the stop. Undefined when the parse did not stop.
   */
  rest: (() => ParsedElement) | undefined;
  /** Content held by a parse that may stop ({@link XmlCheckpoint.skipContent}), not yet deferred. */
  held?: readonly HeldContent[] | undefined;
}

/** The content of an element skipped by a stopping parse, and the element, its content unbuilt. */
export interface HeldContent {
  element: ParsedElement;
  content: string;
}

/** `{ns}local`: the Clark notation used for qualified names throughout this package. */
export function clark(namespace: string, localName: string): string {
  return namespace ? `{${namespace}}${localName}` : localName;
}

/** Resolves a `prefix:local` QName value against an element's in-scope namespaces. */
export function resolveQName(
  value: string,
  scope: Readonly<Record<string, string>>,
): { namespace: string; localName: string } | undefined {
  const trimmed = trimXml(value);
  const colon = trimmed.indexOf(":");
  const prefix = colon === -1 ? "" : trimmed.slice(0, colon);
  const localName = colon === -1 ? trimmed : trimmed.slice(colon + 1);
  const namespace = scope[prefix];
  if (namespace === undefined && prefix !== "") return undefined;
  return { namespace: namespace ?? "", localName };
}

/**
 * Stores an attribute as an own property: an attribute named `__proto__`, assigned to a plain
 * object, would hit Object.prototype's setter and vanish, hidden from every later check.
 */
export function setAttribute(attributes: Record<string, string>, key: string, value: string): void {
  if (key === "__proto__") {
    Object.defineProperty(attributes, key, { value, enumerable: true, writable: true, configurable: true });
  } else {
    attributes[key] = value;
  }
}
