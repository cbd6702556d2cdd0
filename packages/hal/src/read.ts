import { refusedOption } from "@svc/kernel/internal";
import type { HalLink, TemplateVariables } from "./link.js";
import { expandTemplate } from "./link.js";

/** Options of {@link readHal}. */
export interface ReadHalOptions {
  /**
   * The URL the document came from: relative `href`s resolve against it (RFC 3986 §5).
   * @default undefined (hrefs are returned as written)
   */
  base?: string | URL;
  /**
   * Longest JSON text read when the body is a string; a longer one reads as an empty document.
   * @default 1048576 (1 MiB)
   */
  maxLength?: number;
  /**
   * Most links or embedded resources read per relation; the rest are ignored.
   * @default 1000
   */
  maxPerRelation?: number;
}

/** Options of {@link HalReader.follow}. */
export interface FollowOptions {
  /** Picks among links of the relation by `name` (draft-kelly-json-hal-11 §5.5). */
  name?: string;
  /** Values for a templated link (RFC 6570). */
  variables?: TemplateVariables;
  /**
   * The fetch used (anything with `fetch`'s shape: undici, a test double, an authenticated wrapper).
   * @default globalThis.fetch
   */
  fetch?: (url: string, init: { headers: Record<string, string>; signal?: AbortSignal }) => Promise<Response>;
  /** Headers sent; `Accept: application/hal+json, application/json` unless given. */
  headers?: Readonly<Record<string, string>>;
  /**
   * Aborts the request and the reading of its body (`AbortSignal.timeout(5000)` for a deadline);
   * an aborted follow rejects with `ERR_HAL_FETCH`. Like `fetch`, a follow has no deadline of its
   * own: a target that never answers would keep it waiting.
   */
  signal?: AbortSignal;
}

/** Why {@link HalReader.follow} did not return a document; `code` is stable. */
export type HalFollowErrorCode =
  | "ERR_HAL_NO_LINK"
  | "ERR_HAL_BAD_HREF"
  | "ERR_HAL_FETCH"
  | "ERR_HAL_STATUS"
  | "ERR_HAL_NOT_HAL";

/**
 * {@link HalReader.follow} could not get a HAL document: no such link, an href that does not
 * resolve, a network failure, a non-2xx status or a body that is not a JSON object.
 *
 * @example
 * try { await reader.follow("next") } catch (err) { if (err instanceof HalFollowError && err.code === "ERR_HAL_NO_LINK") done() }
 */
export class HalFollowError extends Error {
  readonly code: HalFollowErrorCode;
  /** The relation followed. */
  readonly rel: string;
  /** The URL requested, when there was one. */
  readonly url: string | undefined;
  /** The response status, for `ERR_HAL_STATUS`. */
  readonly status: number | undefined;
  constructor(
    code: HalFollowErrorCode,
    rel: string,
    message: string,
    details: { url?: string; status?: number; cause?: unknown } = {},
  ) {
    super(message, { cause: details.cause });
    this.name = "HalFollowError";
    this.code = code;
    this.rel = rel;
    this.url = details.url;
    this.status = details.status;
  }
}

/** A HAL document read defensively: every accessor answers `undefined` or `[]` for what is not there. */
export interface HalReader {
  /** True when the body was a JSON object (anything else reads as an empty document). */
  readonly ok: boolean;
  /** The resource's own properties: everything but `_links` and `_embedded`. */
  readonly properties: Readonly<Record<string, unknown>>;
  /** The base relative hrefs resolve against, if any. */
  readonly base: string | undefined;
  /** The first link of `rel` (with `name`, the first of that name). */
  link(rel: string, options?: { name?: string }): HalLink | undefined;
  /** Every link of `rel`, in document order. */
  links(rel: string): HalLink[];
  /**
   * The target of a link: the template expanded with `variables`, then resolved against `base`.
   * Undefined when there is no such link or the href does not resolve.
   */
  href(rel: string, options?: { name?: string; variables?: TemplateVariables }): string | undefined;
  /** The first embedded resource of `rel`. */
  embedded(rel: string): HalReader | undefined;
  /** Every embedded resource of `rel`. */
  embeddedList(rel: string): HalReader[];
  /** The link relations present. */
  linkRels(): string[];
  /** The embedded relations present. */
  embeddedRels(): string[];
  /**
   * GETs the link's target and reads it. Rejects with {@link HalFollowError} only; the reader it
   * resolves to has the response URL as its `base`.
   */
  follow(rel: string, options?: FollowOptions): Promise<HalReader>;
}

const DEFAULT_MAX_LENGTH = 1_048_576;
const DEFAULT_MAX_PER_RELATION = 1000;
const LINK_STRINGS = ["href", "type", "deprecation", "name", "profile", "title", "hreflang"] as const;

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** `object[key]` only when it is the object's own: a `__proto__` or `constructor` relation reads nothing inherited. */
const own = (object: unknown, key: string): unknown =>
  isObject(object) && Object.hasOwn(object, key) ? object[key] : undefined;

/** A Link Object as found on the wire, kept only with a string `href` and string attributes. */
function toLink(value: unknown): HalLink | undefined {
  if (!isObject(value) || typeof own(value, "href") !== "string") return undefined;
  const link: Record<string, string | boolean> = {};
  for (const key of LINK_STRINGS) {
    const attribute = own(value, key);
    if (typeof attribute === "string") link[key] = attribute;
  }
  if (own(value, "templated") === true) link.templated = true;
  return link as unknown as HalLink;
}

/** A relation's value as a list: draft-kelly-json-hal-11 §4.1.1 allows one object or an array. */
function entries(value: unknown, max: number): unknown[] {
  if (Array.isArray(value)) return value.slice(0, max);
  return value === undefined ? [] : [value];
}

function parse(body: unknown, maxLength: number): unknown {
  if (typeof body !== "string") return body;
  if (body.length > maxLength) return undefined;
  try {
    return JSON.parse(body);
  } catch {
    return undefined;
  }
}

function resolveHref(href: string, base: string | undefined): string | undefined {
  if (base === undefined) return href;
  try {
    return new URL(href, base).href;
  } catch {
    return undefined;
  }
}

/**
 * Reads a HAL document (a parsed object or its JSON text) for a client or a test. Nothing from the
 * wire makes it throw: a body that is not a JSON object, a relation that is not an object or an
 * array, a link without a string `href` all read as absent. Relations are looked up as own keys
 * only (`__proto__`, `constructor` find nothing inherited), strings over `maxLength` are not
 * parsed and a relation yields at most `maxPerRelation` entries.
 *
 * @example
 * const page = readHal(await res.text(), { base: res.url });
 * page.embeddedList("employees").map((e) => e.properties.name);
 * const next = page.href("next"); // absolute, or undefined on the last page
 * const employee = await page.follow("find", { variables: { id: 7 } });
 * @see https://datatracker.ietf.org/doc/html/draft-kelly-json-hal-11
 */
export function readHal(body: unknown, options: ReadHalOptions = {}): HalReader {
  if (typeof options !== "object" || options === null)
    throw refusedOption("hal", "readHal", options, "an object { base?, maxLength?, maxPerRelation? }");
  const maxLength = positiveInteger(options.maxLength, DEFAULT_MAX_LENGTH, "maxLength");
  const maxPerRelation = positiveInteger(options.maxPerRelation, DEFAULT_MAX_PER_RELATION, "maxPerRelation");
  const base = options.base === undefined ? undefined : URL.parse(String(options.base))?.href;
  if (options.base !== undefined && base === undefined)
    throw refusedOption("hal", "readHal.base", options.base, "an absolute URL", "readHal: base");
  return reader(parse(body, maxLength), base, maxLength, maxPerRelation, base && new URL(base).origin);
}

/** A developer's option (never the wire's): refused with a coded `TypeError`. */
function positiveInteger(value: unknown, fallback: number, option: string): number {
  if (value === undefined) return fallback;
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 1)
    throw refusedOption("hal", `readHal.${option}`, value, "a positive integer", `readHal: ${option}`);
  return value;
}

/** A response body as text, at most `max` characters' worth of bytes; undefined past it. */
async function boundedText(response: Response, max: number): Promise<string | undefined> {
  if (Number(response.headers.get("content-length") ?? 0) > max * 4) {
    await response.body?.cancel();
    return undefined;
  }
  if (!response.body) return "";
  const decoder = new TextDecoder("utf-8", { ignoreBOM: true });
  let text = "";
  let size = 0;
  for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
    size += chunk.byteLength;
    // UTF-8 takes at most 4 bytes a character: past that, the text is over maxLength anyway.
    if (size > max * 4) return undefined;
    text += decoder.decode(chunk, { stream: true });
  }
  text += decoder.decode();
  // RFC 8259 §8.1: parsers "MAY ignore the presence of a byte order mark rather than treating it
  // as an error"; fetch's `json()` does (the Encoding Standard's UTF-8 decode drops it).
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}

/**
 * The headers of a follow: the caller's, with `Accept: application/hal+json, application/json`
 * unless they name an Accept in any case (RFC 9110 §5.1: field names are case-insensitive; both
 * would be sent and joined into one list).
 */
/** Fields that carry the caller's credentials. */
const CREDENTIALS: ReadonlySet<string> = new Set(["authorization", "proxy-authorization", "cookie"]);

/**
 * The headers of a follow; `crossOrigin` drops the caller's credentials. A link is data of the
 * document (a user's homepage, an upload's URL), so a token meant for the document's origin must
 * not go wherever it points: the Fetch Standard drops Authorization the same way when a redirect
 * leaves the origin ("If request's current URL's origin is not same origin with locationURL's
 * origin ... delete headerName from request's header list"), and RFC 9110 §15.4 asks a client
 * following a redirect to consider removing Authorization when the target is another origin.
 */
function followHeaders(
  headers: Readonly<Record<string, string>> | undefined,
  crossOrigin: boolean,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers ?? {})) {
    if (!crossOrigin || !CREDENTIALS.has(name.toLowerCase())) out[name] = value;
  }
  if (!Object.keys(out).some((name) => name.toLowerCase() === "accept"))
    out.accept = "application/hal+json, application/json";
  return out;
}

/**
 * `credentialOrigin`: the origin the caller's credentials are for, that of the first document's
 * base, kept through every follow (undefined without a base: the first URL followed names it).
 */
function reader(
  document: unknown,
  base: string | undefined,
  maxLength: number,
  max: number,
  credentialOrigin: string | undefined,
): HalReader {
  const ok = isObject(document);
  const links = own(document, "_links");
  const embedded = own(document, "_embedded");
  const properties = ok
    ? Object.freeze(
        Object.fromEntries(Object.entries(document).filter(([k]) => k !== "_links" && k !== "_embedded")),
      )
    : Object.freeze({});
  const linksOf = (rel: string): HalLink[] =>
    entries(own(links, rel), max)
      .map(toLink)
      .filter((l): l is HalLink => l !== undefined);
  const embeddedOf = (rel: string): HalReader[] =>
    entries(own(embedded, rel), max)
      .filter(isObject)
      .map((e) => reader(e, base, maxLength, max, credentialOrigin));
  const linkOf = (rel: string, name: string | undefined): HalLink | undefined =>
    linksOf(rel).find((l) => name === undefined || l.name === name);

  const self: HalReader = {
    ok,
    properties,
    base,
    link: (rel, opts) => linkOf(rel, opts?.name),
    links: linksOf,
    href(rel, opts) {
      const link = linkOf(rel, opts?.name);
      if (!link) return undefined;
      let href = link.href;
      if (link.templated) {
        try {
          href = expandTemplate(href, opts?.variables ?? {});
        } catch {
          return undefined;
        }
      }
      return resolveHref(href, base);
    },
    embedded: (rel) => embeddedOf(rel)[0],
    embeddedList: embeddedOf,
    linkRels: () => (isObject(links) ? Object.keys(links) : []),
    embeddedRels: () => (isObject(embedded) ? Object.keys(embedded) : []),
    async follow(rel, opts = {}) {
      if (!linkOf(rel, opts.name)) {
        throw new HalFollowError("ERR_HAL_NO_LINK", rel, `No ${JSON.stringify(rel)} link to follow`);
      }
      const url = self.href(rel, {
        ...(opts.name !== undefined ? { name: opts.name } : {}),
        ...(opts.variables ? { variables: opts.variables } : {}),
      });
      if (url === undefined || !URL.canParse(url)) {
        throw new HalFollowError(
          "ERR_HAL_BAD_HREF",
          rel,
          `The ${JSON.stringify(rel)} link does not resolve to a URL (no base?)`,
        );
      }
      const doFetch = opts.fetch ?? ((u: string, init: RequestInit) => fetch(u, init));
      let response: Response;
      let text: string | undefined;
      try {
        // Without a base, the caller handed over the absolute URL, and its origin is the caller's choice.
        // Compared with the first document's origin, not this one's: a document on another origin
        // (reached by a link, or by a redirect) does not earn the credentials for its own links.
        // The Fetch Standard deletes Authorization once a redirect leaves the origin and never
        // restores it on later hops.
        const crossOrigin = credentialOrigin !== undefined && new URL(url).origin !== credentialOrigin;
        const headers = followHeaders(opts.headers, crossOrigin);
        response = await doFetch(url, opts.signal ? { headers, signal: opts.signal } : { headers });
        text = await boundedText(response, maxLength);
      } catch (cause) {
        throw new HalFollowError("ERR_HAL_FETCH", rel, `GET ${url} failed`, { url, cause });
      }
      if (response.status < 200 || response.status > 299) {
        throw new HalFollowError("ERR_HAL_STATUS", rel, `GET ${url} answered ${response.status}`, {
          url,
          status: response.status,
        });
      }
      const next = reader(
        parse(text, maxLength),
        response.url || url,
        maxLength,
        max,
        credentialOrigin ?? new URL(url).origin,
      );
      if (!next.ok)
        throw new HalFollowError("ERR_HAL_NOT_HAL", rel, `GET ${url} did not answer a JSON object`, { url });
      return next;
    },
  };
  return self;
}
