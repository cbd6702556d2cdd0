import type { IncomingMessage } from "node:http";
import { HttpError } from "@svc/errors";
import {
  type MediaType,
  parseMediaType,
  type RequestView,
  repeatsField,
  splitList,
  type UnreadBodyOptions,
  xmlDeclaredEncoding,
} from "@svc/kernel";
import { checkOptionNames, concatBytes, resolveUnreadBody } from "@svc/kernel/internal";
import {
  decodedContent,
  type RequestCoding,
  requestCodings,
  resolveRequestCodings,
} from "./content-coding.js";
import { because, negotiateChannel, publishBodyRefusal } from "./diagnostics.js";
import { inexactNumbers } from "./exact-numbers.js";
import { type FormBodyOptions, type FormConfig, parseFormBody, resolveFormConfig } from "./form-body.js";
import { byteLimit, refused } from "./options.js";
import { parseXmlBody, XmlNilError, XmlRefusedError, type XmlValue } from "./xml-body.js";
import { fromXmlRepresentation, type XmlBodySchema } from "./xml-representation.js";

export { parseXmlBody, type XmlValue } from "./xml-body.js";

/** Options of `parseBody()` (each framework's entry) and {@link bodyReader}. */
export interface ParseBodyOptions {
  /**
   * Largest accepted body: bytes, or a size as body-parser takes it (`"100kb"`, `"1mb"`); larger → 413.
   * @default 102400 (100 KiB)
   */
  limit?: number | string;
  /**
   * Content codings of a request body that are decoded before it is parsed (RFC 9110 §8.4):
   * `"gzip"` (and `x-gzip`), `"deflate"` (the zlib format), `"br"`, and `"zstd"` where the
   * runtime's zlib has it (Node.js 22.15 and later; named elsewhere, refused at construction).
   * Stacked codings (`Content-Encoding: gzip, br`) are decoded in reverse order, two at most. A
   * coded body is bounded twice by `limit`: the bytes received, and the bytes each decoding step
   * produces, so a small body that decodes to gigabytes is refused (413) once `limit` decoded
   * bytes exist, never decoded whole. A body in another coding → 415 with `Accept-Encoding`
   * naming the enabled ones (RFC 9110 §15.5.16, §12.5.3). On the Fetch API and Node.js, gzip
   * and deflate are decoded by the Compression Standard's `DecompressionStream`.
   * @default [] (identity only: any coded body → 415)
   */
  contentCodings?: ReadonlyArray<RequestCoding>;
  /**
   * Deepest accepted nesting of JSON arrays/objects or XML elements; deeper → 400.
   * @default 32
   */
  depth?: number;
  /**
   * Body media types read: `json` covers `application/json` and any `+json`, `urlencoded` covers
   * `application/x-www-form-urlencoded` (see `form`), `xml` covers
   * `application/xml`, `text/xml` and any `+xml` but `application/soap+xml` (a SOAP envelope is
   * its endpoint's to read, RFC 3902); a media type (`"application/json"`,
   * `"application/merge-patch+json"`, `"application/soap+xml"`) accepts exactly that type, read as
   * JSON or XML by its subtype (`json`, `xml` or a `+json` / `+xml` suffix). A body of any other
   * type is left unread for what comes after (see `others`).
   * @default ["json", "xml"]
   */
  types?: ReadonlyArray<"json" | "xml" | "urlencoded" | (string & {})>;
  /**
   * The bounds of an `application/x-www-form-urlencoded` body (with `urlencoded` in `types`):
   * parsed as `URLSearchParams` parses it, names flat (`a[b]=1` is the name `a[b]`), a repeated
   * name the list of its values, every name an own field (`__proto__` and `constructor`
   * included, never reaching a prototype).
   * @default { maxPairs: 1000, maxKeyBytes: 1024, maxValueBytes: 65536 }
   */
  form?: FormBodyOptions;
  /**
   * What becomes of a body of a type outside `types` (or without `Content-Type`). `"next"`: it
   * is left as it is, unread, `req.body` undefined, for a handler after this middleware (a SOAP
   * endpoint, an upload) to read; mounted with `app.use`, the middleware never answers for
   * another route's types. `"refuse"`: 415, with `Accept-Post` / `Accept-Patch` listing the
   * media types named (`application/json` for `json`, `application/xml` for `xml`), as for a
   * route that reads nothing else (RFC 9110 §15.5.16).
   * @default "next"
   */
  others?: "next" | "refuse";
  /**
   * Milliseconds allowed to receive the whole body, counted from when this middleware starts
   * reading it; a body still incomplete then → 408 with `Connection: close` (RFC 9110 §15.5.9),
   * so a client that sends headers and then trickles or stalls the body cannot hold the request
   * open for the server's own, much longer limit. `false` switches it off.
   * @default 30000
   */
  timeout?: number | false;
  /**
   * The bounds of the refused-body policy, for a body refused before it was read whole (a 415,
   * a 413 by `Content-Length`, over `limit` part-way): a remainder of at most `maxBytes` is read
   * and discarded within `timeoutMs` to keep the connection, a larger or chunked one closes it
   * (`Connection: close`). See `UnreadBodyOptions` of `@svc/kernel`. On the Fetch API a body
   * refused part-way is cancelled and its connection closed.
   * @default { maxBytes: 65536, timeoutMs: 1000 }
   */
  unreadBody?: UnreadBodyOptions;
  /**
   * Refuse a JSON body holding a number that a JavaScript number does not hold exactly: one whose
   * text names another value than the double it parses to (`1.0000000000000001`, read as 1;
   * `9007199254740993`, read as 9007199254740992; `1e400`, Infinity; `1e-400`, 0) → 400 with
   * code `inexact_number` and one `{ field, message }` per such number (RFC 8259 §6). `false`
   * takes such numbers as `JSON.parse` rounds them, silently.
   * @default false
   */
  exactNumbers?: boolean;
  /**
   * What an XML body becomes. `shape: "document"`: the document's plain objects (`{ order: { id:
   * "3" } }`, see `parseXmlBody`). `shape: "representation"`: the value the `xml` representation
   * would have been written from (see `fromXmlRepresentation`): the root unwrapped, `<item>` lists
   * as arrays, and, with a `schema` for the request, leaves typed by it.
   * @default { shape: "document" }
   */
  xml?: {
    /** @default "document" */
    shape?: "document" | "representation";
    /**
     * The JSON Schema of the request's body, typing its leaves (`shape: "representation"` only);
     * undefined leaves every leaf a string.
     * @default none
     */
    schema?: (req: IncomingMessage) => XmlBodySchema | undefined;
  };
}

/** A request after `parseBody()`: `body` holds the parsed value (`undefined` without a body). */
export interface ParsedBodyRequest extends IncomingMessage {
  body?: unknown;
}

type BodyKind = "json" | "xml" | "urlencoded";

/** What a request declares its body to be: the kind, and whether `Content-Type` names a charset. */
interface DeclaredBody {
  readonly kind: BodyKind;
  readonly charsetGiven: boolean;
  /** The content codings to decode, in the order applied; empty for identity. */
  readonly codings: readonly RequestCoding[];
}

/** {@link ParseBodyOptions} checked and resolved once. */
interface BodyConfig {
  readonly limit: number;
  readonly depth: number;
  /** The content codings decoded (`contentCodings`). */
  readonly codings: readonly RequestCoding[];
  /** The kinds accepted whole (`json`: any JSON type). */
  readonly types: ReadonlyArray<BodyKind>;
  /** The media types accepted one by one (essence, lower case), with how each is read. */
  readonly exact: ReadonlyMap<string, BodyKind>;
  readonly timeout: number | false;
  readonly exactNumbers: boolean;
  /** The bounds of a form body. */
  readonly form: FormConfig;
  /** A body of another type is refused (415) rather than left unread. */
  readonly refuseOthers: boolean;
  /** Whether XML is read back as a representation's value, with the schema of a request. */
  readonly xml: {
    readonly representation: boolean;
    readonly schema: ((req: IncomingMessage) => XmlBodySchema | undefined) | undefined;
  };
  /** The accepted types, for `Accept-Post` / `Accept-Patch` and the 415's message. */
  readonly acceptedHeader: string;
}

const BODY_OPTIONS = [
  "limit",
  "contentCodings",
  "depth",
  "types",
  "others",
  "timeout",
  "exactNumbers",
  "xml",
  "form",
  "unreadBody",
];

function resolveBodyConfig(options: ParseBodyOptions): BodyConfig {
  checkOptionNames("negotiate", options, BODY_OPTIONS, "parseBody");
  // Checked here with the others; the adapters, which write nothing themselves, resolve it again
  // for the response.
  resolveUnreadBody("negotiate", options.unreadBody, "parseBody");
  const limit = byteLimit("parseBody", "limit", options.limit ?? 102_400);
  const depth = options.depth ?? 32;
  const types: unknown = options.types ?? ["json", "xml"];
  if (typeof depth !== "number" || !Number.isSafeInteger(depth) || depth < 1) {
    throw refused("parseBody", "depth", depth, "a positive integer");
  }
  const TYPES =
    'a non-empty array of "json", "xml", "urlencoded" and media types read as JSON, XML or a form (such as "application/json", "application/merge-patch+json")';
  if (!Array.isArray(types) || types.length === 0) throw refused("parseBody", "types", types, TYPES);
  const wholeKinds: BodyKind[] = [];
  const exact = new Map<string, BodyKind>();
  for (const t of types as unknown[]) {
    if (t === "json" || t === "xml" || t === "urlencoded") {
      wholeKinds.push(t);
      continue;
    }
    const parsed = typeof t === "string" ? parseMediaType(t) : undefined;
    const essence = parsed && `${parsed.type}/${parsed.subtype}`;
    const kind =
      essence === undefined || parsed?.parameters.length !== 0
        ? undefined
        : kindOf(essence, ["json", "xml", "urlencoded"], true);
    if (essence === undefined || kind === undefined) throw refused("parseBody", "types", types, TYPES);
    exact.set(essence, kind);
  }
  const timeout = options.timeout === undefined ? 30_000 : options.timeout;
  // setTimeout's largest delay (2^31 - 1 ms); a longer one would fire at once.
  if (
    timeout !== false &&
    (typeof timeout !== "number" || !Number.isInteger(timeout) || timeout < 1 || timeout > 2_147_483_647)
  ) {
    throw refused(
      "parseBody",
      "timeout",
      timeout,
      "false or a whole number of milliseconds from 1 to 2147483647",
    );
  }
  const accepted = new Set([
    ...(wholeKinds.includes("json") ? ["application/json"] : []),
    ...(wholeKinds.includes("xml") ? ["application/xml"] : []),
    ...(wholeKinds.includes("urlencoded") ? [FORM_TYPE] : []),
    ...exact.keys(),
  ]);
  const others = options.others ?? "next";
  if (others !== "next" && others !== "refuse") {
    throw refused("parseBody", "others", others, '"next" or "refuse"');
  }
  const exactNumbers = options.exactNumbers ?? false;
  if (typeof exactNumbers !== "boolean")
    throw refused("parseBody", "exactNumbers", exactNumbers, "a boolean");
  const xmlOption: unknown = options.xml ?? {};
  if (typeof xmlOption !== "object" || xmlOption === null || Array.isArray(xmlOption)) {
    throw refused(
      "parseBody",
      "xml",
      xmlOption,
      '{ shape?: "document" | "representation", schema?: (req) => schema }',
    );
  }
  checkOptionNames("negotiate", xmlOption, ["shape", "schema"], "parseBody", "xml");
  const { shape = "document", schema } = xmlOption as NonNullable<ParseBodyOptions["xml"]>;
  if (shape !== "document" && shape !== "representation") {
    throw refused("parseBody", "xml.shape", shape, '"document" or "representation"');
  }
  if (schema !== undefined && (typeof schema !== "function" || shape !== "representation")) {
    throw refused(
      "parseBody",
      "xml.schema",
      schema,
      'a function (req) => JSON Schema, with shape "representation"',
    );
  }
  return {
    limit,
    depth,
    codings: resolveRequestCodings(options.contentCodings),
    types: wholeKinds,
    exact,
    timeout,
    exactNumbers,
    form: resolveFormConfig(options.form),
    refuseOthers: others === "refuse",
    xml: { representation: shape === "representation", schema },
    acceptedHeader: [...accepted].join(", "),
  };
}

function isJson(mediaType: string): boolean {
  return mediaType === "application/json" || /^application\/[a-z0-9.!#$&^_-]+\+json$/.test(mediaType);
}

function isXml(mediaType: string): boolean {
  return (
    mediaType === "application/xml" ||
    mediaType === "text/xml" ||
    /^application\/[a-z0-9.!#$&^_-]+\+xml$/.test(mediaType)
  );
}

/** RFC 3902: a SOAP 1.2 envelope, which `xml` leaves to the SOAP endpoint (named exactly, it is read). */
function isSoap(mediaType: string): boolean {
  return mediaType === "application/soap+xml";
}

function jsonDepth(value: unknown, limit: number): boolean {
  const stack: Array<[unknown, number]> = [[value, 1]];
  while (stack.length > 0) {
    const [v, d] = stack.pop() as [unknown, number];
    if (v !== null && typeof v === "object") {
      if (d > limit) return false;
      for (const child of Object.values(v)) stack.push([child, d + 1]);
    }
  }
  return true;
}

/** Strict: a malformed sequence throws; a BOM is kept (a JSON body's leading one is cut first). */
const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

function hasBody(req: RequestView): boolean {
  const length = req.headers["content-length"];
  return req.headers["transfer-encoding"] !== undefined || (length !== undefined && length !== "0");
}

/** RFC 9110 §15.5.16 with `Accept-Post` / `Accept-Patch` (RFC 5789 §3.1) naming what is accepted. */
function unsupported(
  req: RequestView,
  config: BodyConfig,
  message: string,
  headers: Record<string, string> = {},
): HttpError {
  if (req.method === "POST") headers["Accept-Post"] = config.acceptedHeader;
  if (req.method === "PATCH") headers["Accept-Patch"] = config.acceptedHeader;
  return HttpError.unsupportedMediaType(message, { headers, code: "unsupported_media_type" });
}

function tooLarge(config: BodyConfig): HttpError {
  return HttpError.contentTooLarge(`The request body exceeds ${config.limit} bytes`, {
    code: "content_too_large",
  });
}

/** A body of a type this middleware does not read, left as it is for what comes after. */
const NOT_OURS = Symbol("not ours");

/**
 * The kind of body the request declares (RFC 9110 §8.3, §8.4), the 415/413 refusing it, or
 * {@link NOT_OURS} for a type outside `types` when `others` is `"next"`.
 */
function bodyKind(req: RequestView, config: BodyConfig): DeclaredBody | HttpError | typeof NOT_OURS {
  const contentType = req.headers["content-type"];
  // RFC 9110 §8.3.1; a malformed value (`application/json; charset`) names no type we accept.
  const parsed = contentType === undefined ? undefined : parseMediaType(contentType);
  const mediaType = parsed ? `${parsed.type}/${parsed.subtype}` : (contentType ?? "").trim().toLowerCase();
  const kind = config.exact.get(mediaType) ?? kindOf(mediaType, config.types);
  // RFC 9110 §5.3: "A sender MUST NOT generate multiple field lines with the same name in a
  // message ... unless that field's definition allows multiple field line values to be recombined
  // as a comma-separated list", and Content-Type (§8.3) is a single media type. Node keeps the
  // first of two and drops the other, so the body would be parsed by one type while a proxy or a
  // logger that reads the last takes it for another: refused, as a charset given twice is.
  if (repeatsField(req.rawHeaders, "content-type")) {
    return unsupported(req, config, "Content-Type is given more than once; send one Content-Type");
  }
  if (kind === undefined && !config.refuseOthers) return NOT_OURS;
  const coding = req.headers["content-encoding"];
  let codings: readonly RequestCoding[] = [];
  if (coding !== undefined && !isIdentity(coding)) {
    const decoded = repeatsField(req.rawHeaders, "content-encoding")
      ? { refused: coding }
      : requestCodings(coding, config.codings);
    if (!Array.isArray(decoded)) {
      // RFC 9110 §15.5.16: 415 when "the content is in an unsupported format", and §12.5.3:
      // "Servers that fail a request due to an unsupported content coding ought to respond with
      // a 415 (Unsupported Media Type) status and include an Accept-Encoding header field in that
      // response, allowing clients to distinguish between issues related to content codings and
      // media types." Accept-Encoding names what is decoded.
      const enabled = [...config.codings, "identity"];
      return because(
        unsupported(
          req,
          config,
          config.codings.length === 0
            ? `Content-Encoding "${coding}" is not supported; send the body uncoded`
            : `Content-Encoding "${decoded.refused}" is not supported; accepted: ${enabled.join(", ")} (at most two stacked)`,
          { "Accept-Encoding": enabled.join(", ") },
        ),
        "content-coding",
      );
    }
    codings = decoded;
  }
  if (kind === undefined) {
    return unsupported(
      req,
      config,
      contentType === undefined
        ? `A request body needs a Content-Type; accepted: ${config.acceptedHeader}`
        : `Content-Type "${mediaType}" is not supported; accepted: ${config.acceptedHeader}`,
    );
  }
  const charset = charsetOf(parsed);
  if (charset === TWICE) {
    return unsupported(req, config, "Content-Type names charset more than once; send one charset, UTF-8");
  }
  if (charset !== undefined && !UTF8_NAMES.has(charset)) {
    return unsupported(req, config, `charset "${charset}" is not supported; send UTF-8`);
  }
  const declared = Number(req.headers["content-length"]);
  return Number.isFinite(declared) && declared > config.limit
    ? tooLarge(config)
    : { kind, charsetGiven: charset !== undefined, codings };
}

/**
 * RFC 9110 §8.4: `Content-Encoding = #content-coding`, a list whose empty elements do not count
 * (§5.6.1.2): a list naming nothing but `identity` applies no coding.
 */
function isIdentity(contentEncoding: string): boolean {
  // A list over splitList's bounds is undefined: not identity.
  return splitList(contentEncoding)?.every((c) => c.toLowerCase() === "identity") === true;
}

/** How `mediaType` is read: by its subtype when named `exactly`, else by the kinds accepted whole. */
function kindOf(mediaType: string, types: ReadonlyArray<BodyKind>, exactly = false): BodyKind | undefined {
  if (types.includes("urlencoded") && mediaType === FORM_TYPE) return "urlencoded";
  if (types.includes("json") && isJson(mediaType)) return "json";
  if (types.includes("xml") && isXml(mediaType) && (exactly || !isSoap(mediaType))) return "xml";
  return undefined;
}

/** The URL Standard §5 media type, read by `URLSearchParams`' parser. */
const FORM_TYPE = "application/x-www-form-urlencoded";

/** A `charset` parameter given more than once. */
const TWICE = Symbol("charset twice");

/**
 * The body's charset, lower-cased, or {@link TWICE}: RFC 6838 §4.3, "It is an error for a specific
 * parameter to be specified more than once", and parameter names are case-insensitive (RFC 9110
 * §5.6.6, lower-cased by `parseMediaType`). Reading `charset=utf-8; charset=utf-16` by its first
 * charset would decode as UTF-8 a body that a proxy, a logger or a signature check reading the
 * last takes for UTF-16; it is refused instead, even when both name UTF-8.
 */
function charsetOf(parsed: MediaType | undefined): string | typeof TWICE | undefined {
  let charset: string | undefined;
  for (const [name, value] of parsed?.parameters ?? []) {
    if (name !== "charset") continue;
    if (charset !== undefined) return TWICE;
    charset = value.toLowerCase();
  }
  return charset;
}

const UTF8_NAMES = new Set(["utf-8", "utf8", "us-ascii"]);

/**
 * The encoding an XML body says it is in when that is not UTF-8, else `undefined`. RFC 7303 §3.2
 * (with XML 1.0 §4.3.3 and Appendix F): a byte order mark decides, then the charset parameter
 * (already checked to be UTF-8), then the encoding declaration. Decoding a body declared
 * ISO-8859-1 as UTF-8 anyway would misread it (its bytes C3 A9, "Ã©", would become "é").
 */
function foreignXmlEncoding(body: Uint8Array, charsetGiven: boolean): string | undefined {
  const marked = byteOrderMarkEncoding(body);
  if (marked !== undefined) return marked;
  if (charsetGiven || startsWithUtf8Bom(body)) return undefined;
  const name = xmlDeclaredEncoding(latin1(body.subarray(0, 512)));
  return name === undefined || UTF8_NAMES.has(name) ? undefined : name;
}

/**
 * The encoding a byte order mark other than UTF-8's names, by XML 1.0 Appendix F "Detection
 * Without External Encoding Information", four bytes before two:
 *
 * - `FF FE 00 00`: "UCS-4, little-endian machine (4321 order)", UTF-32LE;
 * - `FE FF 00 00`: "UCS-4, unusual octet order (3412)";
 * - `FE FF ## ##`: "UTF-16, big-endian"; `FF FE ## ##`: "UTF-16, little-endian", the two bytes
 *   after the mark not both 00 (U+0000 is no XML character, §2.2).
 *
 * A mark starting `00 00` (UCS-4 big-endian or 2143) is left to the UTF-8 decoding, which refuses
 * it with a 400 as before: its `FE`/`FF` byte is never UTF-8.
 */
function byteOrderMarkEncoding(body: Uint8Array): string | undefined {
  const nulAfter = body.length >= 4 && body[2] === 0 && body[3] === 0;
  if (body[0] === 0xff && body[1] === 0xfe) return nulAfter ? "utf-32le" : "utf-16le";
  if (body[0] === 0xfe && body[1] === 0xff) return nulAfter ? "ucs-4 (3412)" : "utf-16be";
  return undefined;
}

function startsWithUtf8Bom(body: Uint8Array): boolean {
  return body[0] === 0xef && body[1] === 0xbb && body[2] === 0xbf;
}

/**
 * Each byte as the code point of the same value (ISO-8859-1), as XML 1.0 Appendix F reads the
 * declaration before the encoding is known. Not `TextDecoder("latin1")`: the Encoding Standard
 * maps that label to windows-1252, which reads 0x80 to 0x9F otherwise.
 * @see https://encoding.spec.whatwg.org/#names-and-labels
 */
function latin1(bytes: Uint8Array): string {
  return String.fromCharCode(...bytes);
}

/** The chunks of a body, `size` bytes in all, in one array (the one chunk itself, not a copy). */
function joined(chunks: readonly Uint8Array[], size: number): Uint8Array {
  return chunks.length === 1 ? (chunks[0] as Uint8Array) : concatBytes(chunks, size);
}

/** Decodes and parses the received bytes: the value, or the 400 refusing them. */
function parseReceived(
  body: Uint8Array,
  kind: BodyKind,
  depth: number,
  exactNumbers: boolean,
  form: FormConfig,
): { value: unknown } | HttpError {
  const label = kind === "json" ? "JSON" : kind === "xml" ? "XML" : "form";
  let source: string;
  try {
    // RFC 8259 §8.1: "implementations that parse JSON texts MAY ignore the presence of a byte
    // order mark rather than treating it as an error." Clients that should not send one do
    // (PowerShell's UTF-8 files, .NET writers using Encoding.UTF8); one UTF-8 BOM as the very
    // first bytes is dropped. Anywhere else U+FEFF stays (not JSON white space, so a 400 between
    // tokens, data inside a string), and a UTF-16 BOM is not valid UTF-8. XML keeps its BOM for
    // the XML reader, which reads it as XML 1.0 §4.3.3 says.
    source = utf8.decode(kind === "json" && startsWithUtf8Bom(body) ? body.subarray(3) : body);
  } catch {
    // RFC 8259 §8.1: JSON text exchanged between systems MUST be UTF-8 (and XML declared or
    // defaulted to it here); invalid bytes are refused rather than replaced by U+FFFD.
    return HttpError.badRequest(`Malformed ${label} body: not valid UTF-8`, { code: "malformed_body" });
  }
  // The 400's message is a text of our own: V8's JSON.parse message quotes the client's bytes and
  // changes wording between Node versions, so it is only the cause (for logs, never the record).
  if (kind === "urlencoded") {
    try {
      return { value: parseFormBody(source, form) };
    } catch (err) {
      if (err instanceof HttpError) return err;
      throw err;
    }
  }
  let value: unknown;
  try {
    value = kind === "xml" ? parseXmlBody(source, depth) : JSON.parse(source);
  } catch (err) {
    // XML 1.0 §2.1 makes well-formedness a property of the bytes; a document that has it but
    // breaks the xsi:nil rules (XML Schema Part 1 §2.6.2, §3.3.4: a nil element must be empty,
    // its xsi:nil a boolean of Part 2 §3.2.2) is not malformed but invalid, and says so. Same
    // 400 and code either way: the record's shape does not depend on which rule broke.
    if (err instanceof XmlNilError) {
      return HttpError.badRequest(`Invalid XML body: ${err.message}`, { code: "malformed_body" });
    }
    // A DOCTYPE (XML 1.0 §2.8), nesting past `depth` or a version other than 1.0 (XML 1.1 has
    // rules of its own, which this parser does not apply): a document that may be well-formed,
    // refused by policy, so never called malformed. Still 400 and the same code: 413 (RFC 9110
    // §15.5.14) is for content larger than the server will take, and a deep document may be
    // small; 422 (§15.5.21) for content whose instructions cannot be carried out, which these
    // never reach.
    if (err instanceof XmlRefusedError) {
      return because(
        HttpError.badRequest(`XML body: ${err.message}`, { code: "malformed_body" }),
        XML_REFUSALS[err.problem] ?? "malformed",
      );
    }
    // parseXmlBody's other messages are ours too (well-formedness, with a position).
    const reason = kind === "xml" && err instanceof Error ? err.message : "not valid JSON";
    return HttpError.badRequest(`Malformed ${label} body: ${reason}`, { code: "malformed_body", cause: err });
  }
  // RFC 8259 §9: "An implementation may set limits on the maximum depth of nesting." Valid JSON
  // refused by that limit is not malformed; same 400 and code as the XML refusal above.
  if (kind === "json" && !jsonDepth(value, depth)) {
    return because(
      HttpError.badRequest(`JSON body: nesting deeper than ${depth} levels is not accepted`, {
        code: "malformed_body",
      }),
      "too-deep",
    );
  }
  if (kind === "json" && exactNumbers) {
    const inexact = inexactNumbers(source);
    if (inexact.length > 0) {
      return HttpError.badRequest("JSON body: a number is not held exactly", {
        code: "inexact_number",
        errors: inexact.map(({ path, text }) => ({
          field: path === "" ? "(body)" : path,
          message: `must be a number held exactly by a 64-bit binary float (RFC 8259 §6); ${text} is not`,
        })),
      });
    }
  }
  return { value };
}

/** The `body-refused` reason of each XML reader refusal that is no well-formedness error. */
const XML_REFUSALS: Readonly<Record<string, string>> = {
  dtd: "doctype",
  depth: "too-deep",
  version: "xml-version",
  pi: "processing-instruction",
  elements: "too-many-elements",
  attributes: "too-many-attributes",
  namespaces: "too-many-namespaces",
};

/** What a request body is read from: whole bytes, a `node:http` stream, or any stream of bytes (a `Request`'s body). */
export type BodyContent = Uint8Array | NodeJS.ReadableStream | AsyncIterable<Uint8Array> | null | undefined;

/**
 * Reads one request's body: see {@link bodyReader}. `native`: the framework's request (Fastify's
 * `request`, a Fetch `Request`), named in the refusals published on `svc:negotiate`; by default
 * `request` itself (a `node:http` request is its own view).
 */
export type BodyReader = (request: RequestView, content: BodyContent, native?: object) => Promise<unknown>;

/**
 * `Connection: close` on a refusal of a Fetch body (a `Request`'s stream) left unread part-way:
 * it is cancelled, and the server owns the socket, so closing is the one bounded choice (RFC 9112
 * §9.6). The field rides on the error for the error response. A `node:http` body is left to the
 * kernel's refused-body policy instead (`settleUnreadBody`), which the adapters apply.
 */
function closing(err: HttpError): HttpError {
  if (err.headers.Connection === "close") return err;
  return new HttpError(err.status, err.message, {
    headers: { ...err.headers, Connection: "close" },
    ...(err.code === undefined ? {} : { code: err.code }),
    ...(err.cause === undefined ? {} : { cause: err.cause }),
  });
}

/**
 * Whether a refusal from {@link readBody} asks for the connection to be closed after its response
 * (`Connection: close` among its headers: the rest of the body was not read).
 */
export function closesConnection(err: unknown): boolean {
  return err instanceof HttpError && err.headers.Connection === "close";
}

function isNodeStream(content: BodyContent): content is NodeJS.ReadableStream {
  const stream = content as NodeJS.ReadableStream | null | undefined;
  return typeof stream?.on === "function" && typeof stream.resume === "function";
}

function timedOut(config: BodyConfig): HttpError {
  // RFC 9110 §15.5.9: the server SHOULD send the "close" connection option with a 408, as the rest
  // of the body may still arrive.
  return new HttpError(408, `The request body was not received within ${config.timeout} ms`, {
    code: "request_timeout",
    headers: { Connection: "close" },
  });
}

/**
 * RFC 9112 §8: "A server that receives an incomplete request message, usually due to a canceled
 * request or a triggered timeout exception, MAY send an error response prior to closing the
 * connection." A stream that fails before its end (the client gone mid-body) is a 400 with a
 * code like every other refusal: a client that went away is no server error (no 5xx).
 */
function unreadable(cause: unknown): HttpError {
  return HttpError.badRequest("The request body could not be read", { code: "unreadable_body", cause });
}

/**
 * Receives a `node:http` body up to the limit and within the timeout. Never destroys the stream:
 * a refused rest is paused, for the refused-body policy to discard (within its bounds) or leave to
 * a closing connection, so the refusal can still be answered on it.
 */
function receiveNode(
  stream: NodeJS.ReadableStream,
  config: BodyConfig,
  deferred: HttpError | undefined,
): Promise<Uint8Array> {
  return new Promise((resolve, reject) => {
    const chunks: Uint8Array[] = [];
    let size = 0;
    let done = false;
    let timer: NodeJS.Timeout | undefined;
    const finish = (err: HttpError | undefined) => {
      if (done) return;
      done = true;
      if (timer !== undefined) clearTimeout(timer);
      if (err === undefined) resolve(joined(chunks, size));
      else {
        chunks.length = 0;
        reject(err);
      }
    };
    if (config.timeout !== false) {
      timer = setTimeout(() => finish(timedOut(config)), config.timeout);
      timer.unref?.();
    }
    stream.on("data", (chunk: Uint8Array) => {
      if (done) return;
      if (deferred !== undefined && chunk.length > 0) {
        // Only content of unknown length gets here (a refusal with a Content-Length is sent at once).
        finish(deferred);
        stream.pause();
        return;
      }
      size += chunk.length;
      if (size > config.limit) {
        finish(tooLarge(config));
        stream.pause();
        return;
      }
      chunks.push(chunk);
    });
    stream.on("error", (err) => finish(unreadable(err)));
    stream.on("end", () => finish(undefined));
  });
}

/** Receives a stream of bytes (a `Request`'s body) up to the limit and within the timeout; cancelled when refused. */
async function receiveIterable(
  content: AsyncIterable<Uint8Array>,
  config: BodyConfig,
  deferred: HttpError | undefined,
  failed: (err: unknown) => HttpError = unreadable,
): Promise<Uint8Array> {
  const iterator = content[Symbol.asyncIterator]();
  const chunks: Uint8Array[] = [];
  let size = 0;
  let timer: NodeJS.Timeout | undefined;
  const expired =
    config.timeout === false
      ? undefined
      : new Promise<never>((_resolve, reject) => {
          timer = setTimeout(() => reject(timedOut(config)), config.timeout as number);
          // A timer is a plain number on some Fetch runtimes (Cloudflare Workers): nothing to unref there.
          timer.unref?.();
        });
  expired?.catch(() => undefined);
  const stop = () => {
    iterator.return?.()?.catch?.(() => undefined);
  };
  try {
    for (;;) {
      let step: IteratorResult<Uint8Array>;
      try {
        step = await (expired === undefined ? iterator.next() : Promise.race([iterator.next(), expired]));
      } catch (err) {
        stop();
        throw err instanceof HttpError ? err : failed(err);
      }
      if (step.done) break;
      const chunk = step.value;
      if (deferred !== undefined && chunk.byteLength > 0) {
        stop();
        throw closing(deferred);
      }
      size += chunk.byteLength;
      if (size > config.limit) {
        stop();
        throw closing(tooLarge(config));
      }
      chunks.push(chunk);
    }
  } finally {
    if (timer !== undefined) clearTimeout(timer);
  }
  return joined(chunks, size);
}

/** The bytes of `content` as received, at most `limit` of them; a failing stream → 400 `unreadable_body`. */
async function* received(content: BodyContent, config: BodyConfig): AsyncGenerator<Uint8Array> {
  if (content instanceof Uint8Array) {
    if (content.byteLength > config.limit) throw tooLarge(config);
    yield content;
    return;
  }
  // A node:http request left as it is when decoding stops: the refused-body policy settles the rest.
  const readable = content as { iterator?: (o: { destroyOnReturn: boolean }) => AsyncIterable<Uint8Array> };
  const source =
    typeof readable.iterator === "function"
      ? readable.iterator({ destroyOnReturn: false })
      : (content as AsyncIterable<Uint8Array>);
  let size = 0;
  const iterator = source[Symbol.asyncIterator]();
  try {
    for (;;) {
      let step: IteratorResult<Uint8Array>;
      try {
        step = await iterator.next();
      } catch (err) {
        throw unreadable(err);
      }
      if (step.done) return;
      size += step.value.byteLength;
      if (size > config.limit) throw tooLarge(config);
      yield step.value;
    }
  } finally {
    await iterator.return?.();
  }
}

/**
 * RFC 9110 §8.4.1: a body in `codings`, decoded as it arrives, every step bounded by `limit`. Bytes
 * that are not in the coding they are labelled with → 400.
 */
function receiveDecoded(
  content: BodyContent,
  config: BodyConfig,
  codings: readonly RequestCoding[],
): Promise<Uint8Array> {
  const decoded = decodedContent(received(content, config), codings, config.limit, () => tooLarge(config));
  return receiveIterable(decoded, config, undefined, (cause) =>
    because(
      HttpError.badRequest(`Malformed request body: not valid ${codings.join(", ")} content`, {
        code: "malformed_body",
        cause,
      }),
      "bad-coding",
    ),
  );
}

/** Whether `content` may hold bytes: a `node:http` stream by its framing (RFC 9112 §6), bytes by their length. */
function mayHaveContent(request: RequestView, content: BodyContent): boolean {
  if (content === null || content === undefined) return false;
  if (content instanceof Uint8Array) return content.byteLength > 0;
  if (isNodeStream(content)) return hasBody(request);
  return true;
}

/** The body of `request` read from `content` with `config`: see {@link bodyReader}. */
async function read(config: BodyConfig, request: RequestView, content: BodyContent): Promise<unknown> {
  if (!mayHaveContent(request, content)) return undefined;
  const declared = bodyKind(request, config);
  if (declared === NOT_OURS) return undefined;
  // RFC 9112 §7: chunked is a transfer coding, a property of the message, not of its content:
  // chunked content may still be empty, and empty content needs no Content-Type, as with
  // Content-Length: 0. Without a length, the refusal waits for the first byte of content.
  const length = request.headers["content-length"];
  if (declared instanceof HttpError && (length !== undefined || content instanceof Uint8Array)) {
    // Nothing read: whoever answers settles the rest by the refused-body policy, from its framing.
    throw declared;
  }
  const deferred = declared instanceof HttpError ? declared : undefined;
  let body: Uint8Array;
  const codings = deferred === undefined ? (declared as DeclaredBody).codings : [];
  if (codings.length > 0) body = await receiveDecoded(content, config, codings);
  else if (content instanceof Uint8Array) {
    if (content.byteLength > config.limit) throw tooLarge(config);
    body = content;
  } else if (isNodeStream(content)) body = await receiveNode(content, config, deferred);
  else body = await receiveIterable(content as AsyncIterable<Uint8Array>, config, deferred);
  // Empty content (RFC 9112 §7.1: a chunked body may have no chunk of data): no body.
  if (body.byteLength === 0 || deferred !== undefined) return undefined;
  const { kind, charsetGiven } = declared as DeclaredBody;
  const foreign = kind === "xml" ? foreignXmlEncoding(body, charsetGiven) : undefined;
  if (foreign !== undefined) {
    throw unsupported(request, config, `XML encoding "${foreign}" is not supported; send UTF-8`);
  }
  const parsed = parseReceived(body, kind, config.depth, config.exactNumbers, config.form);
  if (parsed instanceof HttpError) throw parsed;
  if (kind === "xml" && config.xml.representation) {
    return fromXmlRepresentation(
      parsed.value as Record<string, XmlValue>,
      config.xml.schema?.(request as IncomingMessage),
    );
  }
  return parsed.value;
}

/**
 * The framework-free core of request body parsing, its options checked once: a reader of one
 * request's body from its fields (a {@link RequestView}: `node:http`'s request as it is, or
 * `fetchView(request)` of `@svc/kernel/fetch`) and its content (bytes, a `node:http` stream, a
 * `Request`'s `body`). It resolves to the parsed value, or `undefined` when there is no content or
 * its type is outside `types` (the content is then left unread, for what comes after); it rejects
 * with the `HttpError` to answer: 415 (a type refused, a content coding, a charset), 413 (over
 * `limit`), 400 (malformed, too deep, unreadable), 408 (not received within `timeout`). A
 * refusal of a `node:http` body follows the kernel's refused-body policy in the adapters (`unreadBody`);
 * one of a Fetch body read part-way carries `Connection: close` ({@link closesConnection}).
 *
 * @example
 * const read = bodyReader({ limit: "64kb" });
 * const body = await read(fetchView(request), request.body);
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-15.5.16
 */
export function bodyReader(options: ParseBodyOptions = {}): BodyReader {
  const config = resolveBodyConfig(options);
  return function readRequestBody(request, content, native) {
    const reading = read(config, request, content);
    if (!negotiateChannel.hasSubscribers) return reading;
    return reading.catch((err: unknown) => {
      publishBodyRefusal(native ?? request, request.headers["content-type"], err);
      throw err;
    });
  };
}

/**
 * One request's body read with `options` (see {@link bodyReader}, which checks the options once
 * for many requests).
 *
 * @example const value = await readBody({ method: "POST", headers: { "content-type": "application/json" } }, bytes);
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-8.3
 */
export function readBody(
  request: RequestView,
  content: BodyContent,
  options: ParseBodyOptions = {},
): Promise<unknown> {
  return bodyReader(options)(request, content);
}
