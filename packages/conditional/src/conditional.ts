import type { IncomingMessage, ServerResponse } from "node:http";
import {
  appendVary,
  checkOptionNames,
  errorHandler,
  type NextFunction,
  negotiationOf,
  refusedOption,
  trimOws,
} from "@svc/errors";
import { isEntityTag, listMatches, parseEtagList, strongMatch } from "./entity-tag.js";
import { parseHttpDate, withDateLists } from "./http-date.js";
import { dropRepresentationMetadata } from "./not-modified.js";
import { preconditionFailed } from "./preconditions.js";
import { representationTag } from "./validators.js";

/** Options of {@link conditional}. */
export interface ConditionalOptions {
  /**
   * `Cache-Control` for successful GET/HEAD responses that set neither it nor `Expires`, or
   * `false` to leave them without one. `no-cache` lets clients and caches store the response but makes them
   * revalidate it (cheaply, with the ETag) before each reuse. A response that sets a cookie gets
   * it with `private` added and `public` dropped, unless it says `private` or `no-store` already
   * (RFC 9111 §7.3: `Set-Cookie` does not keep a shared cache from storing it).
   * @default "no-cache"
   */
  defaultCacheControl?: string | false;
}

type Body = string | Uint8Array;
type End = ServerResponse["end"];
type RawEnd = (this: ServerResponse, ...args: unknown[]) => ServerResponse;
type RawWrite = (this: ServerResponse, ...args: unknown[]) => boolean;
type RawWriteHead = (this: ServerResponse, ...args: unknown[]) => ServerResponse;
type Send = (this: ServerResponse, ...args: unknown[]) => unknown;
/** A response Express has extended with `res.send`. */
type Sendable = ServerResponse & { send?: Send };

/** The options of {@link conditional}, checked and resolved once, at construction. */
interface ConditionalConfig {
  /** `Cache-Control` for successful GET/HEAD responses that set none, or `false`. */
  readonly defaultCacheControl: string | false;
}

function resolveConditionalConfig(options: ConditionalOptions): ConditionalConfig {
  checkOptionNames("conditional", options, ["defaultCacheControl"], "conditional");
  const defaultCacheControl = options.defaultCacheControl ?? "no-cache";
  if (
    defaultCacheControl !== false &&
    (typeof defaultCacheControl !== "string" || defaultCacheControl.trim() === "")
  ) {
    throw refusedOption(
      "conditional",
      "defaultCacheControl",
      defaultCacheControl,
      "a non-empty string or false",
      "conditional: defaultCacheControl",
    );
  }
  return { defaultCacheControl };
}

/**
 * The default `Cache-Control` for `res`: `private` added (and `public` dropped) when the response
 * sets a cookie. RFC 9111 §7.3: "the Set-Cookie response header field does not inhibit caching; a
 * cacheable response with a Set-Cookie header field can be (and often is) used to satisfy
 * subsequent requests to caches. Servers that wish to control caching of these responses are
 * encouraged to emit appropriate Cache-Control response header fields". `no-cache` alone lets a
 * shared cache store the response and, once revalidated, hand one client's cookie to the next;
 * `private` (§5.2.2.7) keeps it out of shared caches. A default with `private` or `no-store` is
 * kept as it is. `undefined`: none, the response set its own `Expires`.
 */
function defaultFor(res: ServerResponse, cacheControl: string): string | undefined {
  // A response with its own Expires set its freshness: RFC 9111 §4.2.1 computes the lifetime
  // from it when there is no max-age, and a default no-cache (§5.2.2.4: no reuse without
  // validation) or max-age would override it. Only a cookie still needs keeping out of shared
  // caches, which private does without touching the expiry.
  if (res.hasHeader("expires")) return res.hasHeader("set-cookie") ? "private" : undefined;
  if (!res.hasHeader("set-cookie")) return cacheControl;
  const directives = cacheControl
    .split(",")
    .map((d) => d.trim())
    .filter((d) => d !== "");
  const names = directives.map((d) => (d.split("=")[0] as string).trim().toLowerCase());
  if (names.includes("private") || names.includes("no-store")) return cacheControl;
  return ["private", ...directives.filter((_d, i) => names[i] !== "public")].join(", ");
}

/**
 * `errorHandler()` of `@svc/errors`, for the 412 `conditional()` writes after the route ran: the
 * same record, headers dropped and set, as the app's own error handler would write (its options,
 * `problemTypeBase` and `now`, are the defaults here).
 */
const writeError = errorHandler();

function ignoreNext(): void {}

/** The `code` of the warning {@link InvalidEtagWarning} emits. */
const INVALID_ETAG_WARNING_CODE = "SVC_CONDITIONAL_INVALID_ETAG";

/**
 * The warning, once per `conditional()`, that a handler set an `ETag` that is no entity-tag (RFC
 * 9110 §8.8.3: `entity-tag = [ weak ] opaque-tag`, `opaque-tag = DQUOTE *etagc DQUOTE`), such as
 * `res.set("ETag", "7")`. Such a value is no validator: it matches no `If-Match` or
 * `If-None-Match` (a client that stored it and sends it back gets neither a 304 nor a passing
 * `If-Match`), and a 412 carrying it names a tag no retry can satisfy. RFC 9110 §5.5 has a sender
 * generate only field values that match their grammar, so `conditional()` does not send it. It is
 * the application's mistake, and a warning (as `@svc/negotiate` warns of its mount order, through
 * `process.emitWarning` with a stable code) names it without failing the responses.
 */
class InvalidEtagWarning {
  private warned = false;

  emit(etag: string): void {
    if (this.warned) return;
    this.warned = true;
    process.emitWarning(
      `@svc/conditional: a response set the ETag ${JSON.stringify(etag.slice(0, 100))}, which is not an ` +
        'entity-tag (RFC 9110 §8.8.3: a quoted opaque-tag, "7" or W/"7"); conditional() does not send it ' +
        "and tags the response from its bytes instead (a streamed body goes without an ETag). Quote it " +
        `where it is set: res.setHeader("ETag", '"7"'). Warned once.`,
      { code: INVALID_ETAG_WARNING_CODE },
    );
  }
}

/**
 * The mark left on a response this middleware watches, a registered symbol: a compressing
 * `negotiate()` of `@svc/negotiate` mounted after it (whose coder would send the headers before
 * this middleware saw the body) refuses the request rather than answer without validators.
 */
const REVALIDATED = Symbol.for("@svc/conditional");

/**
 * A write or end of the handler after its response was replaced by a 304 or 412: nothing goes
 * out (Node would emit a write-after-end error), the callback is still called, and `false` tells a
 * pipe to stop reading (it is unpiped when the response closes).
 */
function discard(args: unknown[]): false {
  const callback = args.findLast((a) => typeof a === "function") as (() => void) | undefined;
  if (callback !== undefined) process.nextTick(callback);
  return false;
}

/** Destroys the sources not read to their end (a stream without `destroy` is left alone). */
function release(sources: readonly NodeJS.ReadableStream[]): void {
  for (const source of sources) {
    const stream = source as NodeJS.ReadableStream & { destroy?: () => void; readableEnded?: boolean };
    if (stream.readableEnded !== true) stream.destroy?.();
  }
}

function isBody(value: unknown): value is Body {
  return typeof value === "string" || value instanceof Uint8Array;
}

/**
 * The fields given to `writeHead(status, [reason], headers)` set on `res`: an object's names with
 * `setHeader`, as Node sets them over fields already set; Node's flat array (name, value, name,
 * value, ...) replacing the fields it names, a name given twice kept as two field lines (two
 * `Set-Cookie`), as Node sends the array as given (`setHeader`, each name replacing the one before,
 * kept only the last cookie). RFC 9110 §5.3: Set-Cookie "often appears in a response message
 * across multiple field lines and does not use the list syntax" (RFC 6265 §3), so its lines cannot
 * be joined into one either.
 */
function setFields(res: ServerResponse, headers: unknown): void {
  if (Array.isArray(headers)) {
    for (let i = 0; i < headers.length; i += 2) if (headers[i]) res.removeHeader(String(headers[i]));
    for (let i = 0; i < headers.length; i += 2) {
      const name = headers[i];
      if (name) res.appendHeader(String(name), headers[i + 1] as string | string[]);
    }
  } else if (headers !== null && typeof headers === "object") {
    for (const name of Object.keys(headers)) {
      if (name)
        res.setHeader(name, (headers as Record<string, string | string[]>)[name] as string | string[]);
    }
  }
}

/** Whether the response carries a content coding other than identity (RFC 9110 §8.4). */
function isCoded(res: ServerResponse): boolean {
  const coding = headerText(res, "content-encoding");
  return coding !== undefined && coding.trim() !== "" && coding.trim().toLowerCase() !== "identity";
}

/** RFC 9110 §8.8.3: a strong tag of other bytes (the identity ones) becomes weak on coded ones. */
function weakenEtag(res: ServerResponse): void {
  const etag = headerText(res, "etag");
  if (etag?.startsWith('"')) res.setHeader("ETag", `W/${etag}`);
}

/** A response header as one string; `name` in lower case (Node's key: no copy, a fast lookup). */
function headerText(res: ServerResponse, name: string): string | undefined {
  const v = res.getHeader(name);
  return v === undefined ? undefined : Array.isArray(v) ? v.join(", ") : String(v);
}

/**
 * Whether an `If-Match` / `If-None-Match` value names the response's `ETag`: `*` always (the
 * representation exists), else by the strong (`If-Match`) or weak (`If-None-Match`) comparison of
 * RFC 9110 §8.8.3.2.
 */
function tagListMatches(value: string, res: ServerResponse, strong: boolean): boolean {
  const list = parseEtagList(value);
  if (list === "*") return true;
  const etag = headerText(res, "etag");
  return etag !== undefined && listMatches(list, etag, strong);
}

/**
 * The response's `Last-Modified` in seconds: an HTTP-date as `setLastModified` writes it, else
 * whatever date the handler wrote; `undefined` without one (or with one no parser reads).
 */
function lastModifiedSeconds(res: ServerResponse): number | undefined {
  const lastModified = headerText(res, "last-modified");
  if (lastModified === undefined) return undefined;
  const seconds = parseHttpDate(lastModified) ?? Math.floor(Date.parse(lastModified) / 1000);
  return Number.isNaN(seconds) ? undefined : seconds;
}

/**
 * RFC 9110 §13.1.5, the If-Range condition on the validators `res` carries now: "To evaluate a
 * received If-Range header field containing an entity-tag: 1. If the entity-tag validator
 * provided exactly matches the ETag field value for the selected representation using the strong
 * comparison function (Section 8.8.3.2), the condition is true" (a weak tag, on either side,
 * never does); "containing an HTTP-date: 1. If the HTTP-date validator provided is not a strong
 * validator in the sense defined by Section 8.8.2.2, the condition is false. 2. If the HTTP-date
 * validator provided exactly matches the Last-Modified field value for the selected
 * representation, the condition is true." (by exact match, not the "earlier than or equal to" of
 * If-Unmodified-Since). §8.8.2.2: a Last-Modified is strong only when the origin server knows the
 * representation "did not change twice during the second covered by the presented validator";
 * one in the second of the message's Date, or later, may still change within it, so it is not.
 * Anything else (no entity-tag and no HTTP-date: `W/"a"x`, `w/"a"`, two tags, an empty value)
 * can match no representation: false.
 */
function ifRangeHolds(value: string, res: ServerResponse): boolean {
  if (isEntityTag(value)) {
    const etag = headerText(res, "etag");
    return etag !== undefined && strongMatch(value, etag);
  }
  const date = parseHttpDate(value);
  const modified = lastModifiedSeconds(res);
  if (date === undefined || modified === undefined || date !== modified) return false;
  const origination = parseHttpDate(headerText(res, "date")) ?? Math.floor(Date.now() / 1000);
  return modified < origination;
}

/** The requests whose `If-Range` {@link guardIfRange} already evaluates. */
const ifRangeGuarded = new WeakSet<IncomingMessage>();

/**
 * RFC 9110 §13.2.2 step 5, shared by `conditional()` and `preconditions()`: "When the method is
 * GET and both Range and If-Range are present, evaluate the If-Range precondition: if true and the
 * Range is applicable to the selected representation, respond 206 (Partial Content); otherwise,
 * ignore the Range header field and respond 200 (OK)".
 *
 * Makes the request's `If-Range` read, by whatever serves the range (`express.static` and
 * `res.sendFile` through `send`, or the handler), as {@link ifRangeHolds} evaluates it on the
 * validators the response carries at that moment (a range is served after its validators are
 * set: they are what If-Range is compared with). True: the value as received. False: a weak tag
 * in its place, which every evaluation of §13.1.5 finds false, so that the Range header field is
 * ignored and the whole representation sent ("A recipient of an If-Range header field MUST ignore
 * the Range header field if the If-Range condition evaluates to false"). `send` tests whether the
 * value contains the ETag as a substring, which is how it let its own weak tag, a list of tags or
 * `W/"a"x` through, and compares dates with `<=`: the weak tag given is longer than the ETag and
 * holds none. Only with a `Range` header field: "A server MUST ignore an If-Range header field
 * received in a request that does not contain a Range header field."
 */
export function guardIfRange(req: IncomingMessage, res: ServerResponse): void {
  const headers = req.headers;
  // Range is defined for GET (RFC 9110 §14.2), whose header fields a HEAD carries (§9.3.2).
  if (headers["if-range"] === undefined || (req.method !== "GET" && req.method !== "HEAD")) return;
  // Once per request: conditional() and preconditions() both mounted evaluate it on the one
  // response (a second guard would otherwise take the first one's answer for the value received).
  if (ifRangeGuarded.has(req)) return;
  const given = headers["if-range"];
  if (typeof given !== "string" || headers.range === undefined) return;
  ifRangeGuarded.add(req);
  const redefine = (value: unknown): void => {
    Object.defineProperty(headers, "if-range", {
      value,
      writable: true,
      configurable: true,
      enumerable: true,
    });
  };
  Object.defineProperty(headers, "if-range", {
    configurable: true,
    enumerable: true,
    get: () =>
      ifRangeHolds(given, res) ? given : `W/"${"!".repeat((headerText(res, "etag") ?? "").length + 1)}"`,
    set: redefine,
  });
}

/**
 * One response passing through {@link conditional}: what the full response would have looked
 * like (for a 304 or a HEAD made from it), and the steps run when the handler sends it. One object
 * per request, in place of a closure per step. TypeScript `private` rather than `#` members: on
 * Node 20 the `#` form measured about 900 more CPU instructions per request (callgrind).
 */
class Revalidation {
  private readonly req: IncomingMessage;
  private readonly res: ServerResponse;
  private readonly config: ConditionalConfig;
  private readonly invalidEtag: InvalidEtagWarning;
  /** The real `res.end`. */
  private readonly realEnd: RawEnd;
  /** The real `res.write`. */
  private readonly realWrite: RawWrite;
  /** The real `res.writeHead`. */
  private readonly realWriteHead: RawWriteHead;
  /**
   * Inside the handler's `res.write` / `res.end`: the `writeHead` Node calls from there to send
   * the head goes out as it is.
   */
  busy = 0;
  /** A streamed 2xx was answered with a 304 or 412 instead: the handler's later writes go nowhere. */
  private replaced = false;
  /** Streams piped into the response (its `pipe` events), to release if it is replaced. */
  private sources: NodeJS.ReadableStream[] | undefined = undefined;
  /** The body is streamed: its length is unknown, so any compressible type would be coded. */
  private streamed = false;
  /** GET and HEAD: the only methods answered with a 304 or given the default cache policy. */
  private readonly safe: boolean;
  /** The full response's `Content-Type`, once a body was labelled. */
  private contentType: string | undefined = undefined;
  /** The byte length of the labelled body, for the coding its full response would get. */
  private length: number | undefined = undefined;
  /**
   * The `ETag` of the 2xx to a GET/HEAD as {@link settleEtag} left it (the one the full response
   * sends), so that it is settled once, not at every comparison.
   */
  private settled: string | undefined = undefined;

  constructor(
    req: IncomingMessage,
    res: ServerResponse,
    config: ConditionalConfig,
    invalidEtag: InvalidEtagWarning,
  ) {
    this.req = req;
    this.res = res;
    this.config = config;
    this.invalidEtag = invalidEtag;
    this.realEnd = res.end as RawEnd;
    this.realWrite = res.write as RawWrite;
    this.realWriteHead = res.writeHead as RawWriteHead;
    this.safe = req.method === "GET" || req.method === "HEAD";
  }

  private successful(): boolean {
    return this.res.statusCode >= 200 && this.res.statusCode < 300;
  }

  /**
   * Every 2xx body gets a strong tag (Express would add its weak one), weak when the response
   * is (or would be) content-coded (RFC 9110 §8.8.3); successful GET/HEAD responses get the
   * default `Cache-Control`. A handler's own `ETag` is kept (made weak when coded), unless it is
   * no entity-tag: then the body is tagged as if the handler had set none.
   */
  label(body: Body, fallbackType: string): void {
    const res = this.res;
    const contentType = headerText(res, "content-type") ?? fallbackType;
    const length = typeof body === "string" ? Buffer.byteLength(body) : body.byteLength;
    this.contentType = contentType;
    this.length = length;
    if (!this.successful()) return;
    this.defaultCachePolicy(res);
    this.settleEtag(res);
    if (res.hasHeader("etag")) return;
    // RFC 9110 §8.8.3: one representation's tag, labelled by its media type and language, so the
    // JSON and the HAL+JSON of the same bytes never revalidate each other.
    const tag = representationTag(contentType, headerText(res, "content-language"), body);
    this.settled = this.wouldBeCoded(res) ? `W/${tag}` : tag;
    res.setHeader("ETag", this.settled);
  }

  /**
   * The response's `ETag` made the one its full response sends, before any precondition is
   * compared with it, so that the 412 / 304 / 200 decided and the tag sent agree:
   *
   * - a value that is no entity-tag (RFC 9110 §8.8.3), such as `7` or `"a b"`, is removed, with a
   *   warning: it is no validator (it matches no `If-Match` and no `If-None-Match`), and RFC 9110
   *   §5.5 has a sender generate only values matching the field's grammar;
   * - on a 2xx to a GET/HEAD that is (or would be) content-coded, a strong tag is made weak now,
   *   not once the headers go out: §8.8.3 makes the coded bytes a representation of their own,
   *   whose tag is the weak one, and §13.1.1 compares `If-Match` with the selected
   *   representation's current tag by the strong comparison. Compared before it was weakened,
   *   `If-Match: "v7"` passed where the response then said `ETag: W/"v7"`, a 200 whose validator
   *   fails the very precondition it passed (and a computed tag, weak from the start, gave a 412).
   */
  private settleEtag(res: ServerResponse): void {
    const etag = headerText(res, "etag");
    if (etag === undefined || etag === this.settled) return;
    if (!isEntityTag(etag)) {
      res.removeHeader("etag");
      this.invalidEtag.emit(etag);
      return;
    }
    // Only the tag of a 2xx to a GET/HEAD is compared here; any other response's tag is made
    // weak by @svc/negotiate when it codes it.
    if (!this.safe || !this.successful()) return;
    const tag = trimOws(etag);
    this.settled = tag.startsWith('"') && this.wouldBeCoded(res) ? `W/${tag}` : etag;
    if (this.settled !== etag) res.setHeader("ETag", this.settled);
  }

  /**
   * `defaultCacheControl` on a successful GET/HEAD response that sets none: a labelled body, and
   * equally a streamed one or a HEAD ended without content, whose 304 gets it too (§15.4.5) and
   * whose GET's 200 has it (a HEAD carries the GET's header fields, RFC 9110 §9.3.2).
   */
  private defaultCachePolicy(res: ServerResponse): void {
    const cacheControl = this.config.defaultCacheControl;
    if (this.safe && cacheControl !== false && !res.hasHeader("cache-control")) {
      const value = defaultFor(res, cacheControl);
      if (value !== undefined) res.setHeader("Cache-Control", value);
    }
  }

  /**
   * Express's `res.send`: tag the body before Express would add its weak tag; Express then asks
   * `req.fresh` and turns the response into a 304 with the right headers stripped. For that call
   * `req.fresh` is this evaluation rather than Express's (`fresh` on the raw headers, which takes
   * `If-Modified-Since: 2099-01-01` for a date, RFC 9110 §13.1.3).
   */
  sendWithEtag(res: ServerResponse, send: Send, args: unknown[]): unknown {
    // Express 4 still takes the deprecated `res.send(status, body)` and `res.send(body, status)`:
    // every argument goes on to Express. Which one is the body, and the status, are Express's to
    // decide, so such a body is tagged when it reaches `res.end`, with its status set.
    const body = args[0];
    if (args.length < 2 && isBody(body))
      this.label(body, typeof body === "string" ? "text/html" : "application/octet-stream");
    const req = this.req;
    // Without either header Express's `req.fresh` is false, as ours would be: nothing to
    // override, and no own property defined and deleted on the request on the common path.
    if (req.headers["if-none-match"] === undefined && req.headers["if-modified-since"] === undefined)
      return send.apply(res, args);
    Object.defineProperty(req, "fresh", {
      configurable: true,
      get: () => {
        const status = res.statusCode;
        this.settleEtag(res);
        return (
          this.safe &&
          (status === 304 || (status >= 200 && status < 300 && this.preconditionsHold(res))) &&
          this.currentCopy(res)
        );
      },
    });
    try {
      return send.apply(res, args);
    } finally {
      delete (req as IncomingMessage & { fresh?: boolean }).fresh;
    }
  }

  /**
   * `res.write`: a streamed body (`res.write`, a pipe, `express.static`) sends the headers with its
   * first write, long before `res.end`, so its preconditions are evaluated here, on the validators
   * the handler set. RFC 9110 §13.1.1, §13.1.2: "the origin server MUST NOT perform the requested
   * method if the condition evaluates to false; instead, the origin server MUST respond with
   * either a) the 304 (Not Modified) status code if the request method is GET or HEAD or b) the
   * 412 (Precondition Failed) status code"; a streamed 200 after a false `If-Match` was neither.
   * No tag is computed for a stream (its bytes are not all there yet).
   */
  write(res: ServerResponse, args: unknown[]): boolean {
    if (this.replaced || !this.startStream(res)) return discard(args);
    return this.realWrite.apply(res, args);
  }

  /**
   * `res.flushHeaders()`: the head of a streamed body goes out now (a server-sent event stream
   * before its first event), so its preconditions are evaluated now, as at a first write.
   */
  flushHeaders(res: ServerResponse, realFlushHeaders: () => void): void {
    if (!this.replaced && this.startStream(res)) realFlushHeaders.call(res);
  }

  /** A stream piped into the response: released at once if the response was already replaced. */
  piped(source: NodeJS.ReadableStream): void {
    if (this.replaced) process.nextTick(release, [source]);
    else if (this.sources === undefined) this.sources = [source];
    else this.sources.push(source);
  }

  /**
   * The response was replaced by a 304 or 412 at a write: the handler's body goes nowhere, and
   * the piped sources are released. `pipe` stops at the discarded write and unpipes when the
   * response closes, but destroys nothing: a file stream kept its descriptor open for good, one
   * per revalidation, until the process ran out (EMFILE).
   */
  private replace(): void {
    this.replaced = true;
    if (this.sources !== undefined) process.nextTick(release, this.sources);
    this.sources = undefined;
  }

  /**
   * The head of a streamed 2xx to a GET or HEAD is about to go out: evaluates its preconditions
   * on the validators set, and answers the 412 or 304 in its place (`false`: the handler's body
   * goes nowhere). `true`: the head may go out, with the default `Cache-Control`.
   */
  private startStream(res: ServerResponse): boolean {
    if (res.headersSent) return true;
    if (!this.safe || !this.successful()) {
      this.settleEtag(res);
      // A 304 of the handler's whose head goes out at a write or flushHeaders: as at res.end.
      if (res.statusCode === 304) this.ownNotModified(res);
      return true;
    }
    this.streamed = true;
    this.contentType ??= headerText(res, "content-type");
    // The handler's tag as the streamed (and possibly coded) 200 sends it: bytes the handler coded
    // itself, or that @svc/negotiate codes, get W/ (RFC 9110 §8.8.3), before If-Match is compared.
    this.settleEtag(res);
    if (!this.preconditionsHold(res)) {
      this.failPrecondition(res);
      this.replace();
      return false;
    }
    if (this.isFresh(res)) {
      this.notModified(res);
      res.statusCode = 304;
      this.realEnd.call(res);
      this.replace();
      return false;
    }
    this.defaultCachePolicy(res);
    return true;
  }

  /**
   * The handler's `res.writeHead(status, [reason], [headers])`, the way a plain `node:http` handler
   * answers (`res.writeHead(200, headers).end(body)`): sent at once, the head left nothing to
   * revalidate, so a 200 went out where RFC 9110 §13.1.1 and §13.1.4 call for a 412 and §13.1.2
   * and §13.1.3 for a 304, without an ETag or the default `Cache-Control`. For a 2xx to a GET or
   * HEAD, the status and fields are set on the response as Node's `writeHead` sets them, and the
   * head is left to the first write or `end`, which evaluate the preconditions as for any
   * response. Any other head goes out at once, its `ETag` settled first as at `end`; Node's own
   * call from inside a write goes out as it is.
   */
  writeHead(res: ServerResponse, args: unknown[]): ServerResponse {
    // Node's own call from inside a write or end (the hot path): the head as it is.
    if (this.busy > 0) return this.realWriteHead.apply(res, args);
    if (this.replaced) return res;
    const [status, reason] = args;
    // Node's reading of the arguments: writeHead(status, [reason], [headers]).
    const headers = typeof reason === "string" ? args[2] : (args[2] ?? reason);
    if (
      res.headersSent ||
      typeof status !== "number" ||
      status < 100 ||
      status > 999 ||
      (Array.isArray(headers) && headers.length % 2 !== 0)
    )
      // Node refuses these (or the head is gone): its error, as it would be without us.
      return this.realWriteHead.apply(res, args);
    if (!this.safe || status < 200 || status > 299) {
      // The head of any other response (a 404, a 304 or 412 of the handler's, a 201 to a POST)
      // goes out now, but under the rule res.end applies: RFC 9110 §5.5, a sender generates only
      // field values that match the field's grammar, and §8.8.3, "entity-tag = [ weak ]
      // opaque-tag; opaque-tag = DQUOTE *etagc DQUOTE". Its fields are set on the response as
      // Node sets them when some were set before, so that the ETag given here, as an object or a
      // flat array, or with setHeader, is settled like any other, then the head is sent.
      res.statusCode = status;
      setFields(res, headers);
      this.settleEtag(res);
      // The handler's own 304 gets the fields conditional()'s own 304 gets, as at res.end.
      if (status === 304) this.ownNotModified(res);
      return typeof reason === "string"
        ? this.realWriteHead.call(res, status, reason)
        : this.realWriteHead.call(res, status);
    }
    res.statusCode = status;
    if (typeof reason === "string") res.statusMessage = reason;
    setFields(res, headers);
    return res;
  }

  /** `res.end`: label a body `send` did not see, then answer 304 if the client's copy is current. */
  end(res: ServerResponse, args: unknown[]): ServerResponse {
    if (this.replaced) {
      discard(args);
      return res;
    }
    if (!res.headersSent) {
      const chunk = args[0];
      if (isBody(chunk) && chunk.length > 0 && this.contentType === undefined) {
        this.label(chunk, "application/octet-stream");
      }
      // A tag label() did not see (a HEAD or an empty 200 ended without content, a 304 the
      // handler set, a response of another method or status): checked, and weak when coded.
      this.settleEtag(res);
      // Unsafe methods have nothing to revalidate: preconditions() answers those.
      if (res.statusCode === 304) {
        this.ownNotModified(res);
      } else if (this.safe && this.successful() && !this.preconditionsHold(res)) {
        return this.failPrecondition(res);
      } else if (this.safe && this.isFresh(res)) {
        this.notModified(res);
        res.statusCode = 304;
        return this.realEnd.call(res);
      } else if (this.safe && this.successful()) {
        // The handler's tag on bytes it coded itself was made weak by settleEtag(): its 304
        // (which drops Content-Encoding) says W/, and so does this 200, whether or not
        // @svc/negotiate is there to weaken it.
        this.defaultCachePolicy(res);
      }
    }
    return this.realEnd.apply(res, args);
  }

  /**
   * RFC 9110 §13.2.2 steps 1 and 2 for this successful GET/HEAD response: `If-Match` (strong
   * comparison, §8.8.3.2; `*` holds, the representation exists), else `If-Unmodified-Since`
   * against `Last-Modified` (§13.1.4). The origin server "MUST NOT perform the requested method"
   * when either is false (§13.1.1); the handler of a safe method has changed nothing, so its
   * response is replaced by the 412. Only for a response that would be 2xx (§13.2.1).
   */
  private preconditionsHold(res: ServerResponse): boolean {
    // Two If-Unmodified-Since lines are a list of dates, to be ignored (RFC 9110 §5.3, §13.1.4).
    const headers = withDateLists(this.req);
    const ifMatch = headers["if-match"];
    if (ifMatch !== undefined) return tagListMatches(ifMatch, res, true);
    const ifUnmodifiedSince = headers["if-unmodified-since"];
    if (ifUnmodifiedSince === undefined) return true;
    // §13.1.4: "A recipient MUST ignore the If-Unmodified-Since header field if the received
    // field value is not a valid HTTP-date", and when the resource has no modification date.
    const since = parseHttpDate(ifUnmodifiedSince);
    const modified = lastModifiedSeconds(res);
    return since === undefined || modified === undefined || modified <= since;
  }

  /**
   * The 412 (RFC 9110 §15.5.13) in place of the response, written by `errorHandler()` of
   * `@svc/errors` as it writes `preconditions()`'s: the error record in the format `Accept` asks
   * for, with the current `ETag` and `Last-Modified` (RFC 9110 §13.1.1: the client refetches and
   * retries with them), `Cache-Control: no-store`, `Vary: Accept`, no body for HEAD, and the
   * representation headers of the replaced 2xx removed. Written here rather than passed to
   * `next`: the route already ran, and `next` may be called once.
   */
  private failPrecondition(res: ServerResponse): ServerResponse {
    const etag = headerText(res, "etag");
    const modified = lastModifiedSeconds(res);
    const err = preconditionFailed({
      etag,
      lastModified: modified === undefined ? undefined : new Date(modified * 1000),
    });
    writeError(err, this.req, res, ignoreNext);
    return res;
  }

  /**
   * Whether the client's copy of this successful response is current (`If-None-Match`, else
   * `If-Modified-Since`, RFC 9110 §13.1.2, §13.1.3). Whether or not a body was sent: a HEAD (or
   * an empty 200) answered with `res.end()` and the handler's own validators is evaluated as its
   * GET is, since "the origin server MUST NOT perform the requested method if the condition
   * evaluates to false; instead, the origin server MUST respond with [...] the 304 (Not Modified)
   * status code if the request method is GET or HEAD" (§13.1.2).
   */
  private isFresh(res: ServerResponse): boolean {
    return this.successful() && this.currentCopy(res);
  }

  /** Whether the validators of `res` satisfy the request's `If-None-Match`, else `If-Modified-Since`. */
  private currentCopy(res: ServerResponse): boolean {
    // Two If-Modified-Since lines are a field value of two members, to be ignored (§5.3, §13.1.3).
    const headers = withDateLists(this.req);
    const ifNoneMatch = headers["if-none-match"];
    if (ifNoneMatch !== undefined) {
      // Weak comparison (§8.8.3.2) over the list as §13.1.2 defines it (`#entity-tag`): an
      // opaque-tag may hold a comma (`"a,b"`, §8.8.3 etagc), which splitting the value on commas,
      // as `fresh` does, breaks. "A recipient MUST ignore If-Modified-Since if the request
      // contains an If-None-Match header field" (§13.1.3), even an empty one. The request's
      // `Cache-Control` plays no part: §13.1.2 has an origin server evaluate If-None-Match, and a
      // request's `no-cache` asks for exactly that validation (RFC 9111 §5.2.1.4; fetch() adds it
      // to every conditional request), where `fresh` would answer "never 304".
      return tagListMatches(ifNoneMatch, res, false);
    }
    // §13.1.3: "A recipient MUST ignore If-Modified-Since if the received field value is not a
    // valid HTTP-date, [or] the field value has more than one member". Not through `fresh`, whose
    // Date.parse takes `2026-06-01` or a bare `2099` for a date and answers 304.
    const since = parseHttpDate(headers["if-modified-since"]);
    const modified = lastModifiedSeconds(res);
    return since !== undefined && modified !== undefined && modified <= since;
  }

  /**
   * Whether the full response would be content-coded: the handler set a coding itself, or
   * `@svc/negotiate` would code the labelled body for this request.
   */
  private wouldBeCoded(res: ServerResponse): boolean {
    if (isCoded(res)) return true;
    const n = negotiationOf(res);
    // @svc/negotiate codes no response carrying a Content-Range: its offsets count the identity
    // bytes (RFC 9110 §14.4).
    if (n === undefined || res.hasHeader("content-range")) return false;
    if (this.length !== undefined) return n.codingFor(this.contentType, this.length) !== "identity";
    // A streamed body, and a HEAD ended without content: RFC 9110 §9.3.2 gives the HEAD the header
    // fields of its GET, which @svc/negotiate codes by the declared Content-Length, or as a stream
    // of unknown length without one; its 304 carries the tag that 200 has (§15.4.5), weak when
    // coded.
    // A handler's own 304 has no body either: its 200 is predicted the same way.
    if (!this.streamed && this.req.method !== "HEAD" && res.statusCode !== 304) return false;
    const declared = Number(headerText(res, "content-length") ?? Number.NaN);
    const type = this.contentType ?? headerText(res, "content-type");
    return n.codingFor(type, Number.isFinite(declared) ? declared : undefined) !== "identity";
  }

  /**
   * The handler's own 304. To a GET/HEAD: made as conditional()'s own ({@link notModified}). To any
   * other method it is the application's mistake, a 304 answering "a conditional GET or HEAD
   * request" (RFC 9110 §15.4.5); its status stays as the handler chose (there is no 200 to send in
   * its place), but it is still a 304: it has no content, whatever its fields say (RFC 9112 §6.3:
   * "any response with a 1xx, 204, or 304 status code is always terminated by the first empty line
   * after the header fields"; Node sends none), and "SHOULD NOT generate representation metadata
   * other than the above listed fields" (§15.4.5). Its Content-Length, Content-Type,
   * Content-Encoding and Content-Language go, as on every 304; the GET-only steps (a weak tag for a
   * coded 200, the default Cache-Control) do not apply.
   */
  private ownNotModified(res: ServerResponse): void {
    if (this.safe) this.notModified(res);
    else dropRepresentationMetadata(res);
  }

  /**
   * Every 304 to a GET/HEAD goes through here, whoever made it and however its head is written:
   * conditional()'s own, the handler's `res.status(304).end()`, `res.writeHead(304, headers)` (an
   * object, a flat array, or fields set before) and a 304 whose head goes out at a write or at
   * `flushHeaders()`. Only the first one used to: a handler's `writeHead(304, headers)` sent the
   * full body's Content-Length, its Content-Type, Content-Encoding and Content-Language, which
   * RFC 9110 §15.4.5 has a 304 leave out ("SHOULD NOT generate representation metadata other
   * than the above listed fields"; §8.6 a Content-Length only of the 200's own content), and no
   * default Cache-Control where its 200 had one.
   *
   * A 304 drops the representation's metadata (RFC 9110 §15.4.5) but keeps its `Vary`: the full
   * response would have varied on Accept-Encoding, so its 304 says so too. RFC 9110 §15.4.5: "The
   * server generating a 304 response MUST generate any of the following header fields that would
   * have been sent in a 200 (OK) response to the same request: Content-Location, Date, ETag, and
   * Vary; and Cache-Control and Expires". The 200 gets the default `Cache-Control` when it sets
   * none, so a 304 that did not come from a labelled body (a handler's or `preconditions()`'s own
   * 304) gets it too.
   */
  private notModified(res: ServerResponse): void {
    // RFC 9110 §15.4.5: the ETag "that would have been sent in a 200 (OK) response to the same
    // request". A coded 200 carries a weak tag (§8.8.3: a strong tag names exact bytes), made weak
    // once its headers are final, by `@svc/negotiate` or above; the 304 drops Content-Encoding
    // first, so it is made weak here, before the coding is forgotten. A cache updates a stored
    // response only from a 304 whose strong validator it holds (RFC 9111 §4.3.4): a strong tag on
    // the 304 of a W/ 200 freshens nothing.
    if (this.wouldBeCoded(res)) weakenEtag(res);
    dropRepresentationMetadata(res);
    const cacheControl = this.config.defaultCacheControl;
    if (cacheControl !== false && !res.hasHeader("cache-control")) {
      const value = defaultFor(res, cacheControl);
      if (value !== undefined) res.setHeader("Cache-Control", value);
    }
    if (negotiationOf(this.res)?.compressible(this.contentType)) appendVary(this.res, "Accept-Encoding");
  }
}

/**
 * Strong, per-representation ETags, 304 revalidation and 412 for GET and HEAD, replacing Express's
 * weak default tag:
 *
 * - the tag is computed (with the `etag` package) from the identity bytes the handler sends, so
 *   the JSON and the XML of one resource differ; a handler's own `ETag` is kept, unless it is no
 *   entity-tag (RFC 9110 §8.8.3): then it is not sent, the body is tagged as if it had none, and
 *   a warning (code `SVC_CONDITIONAL_INVALID_ETAG`) is emitted once;
 * - when the response is (or, for HEAD and 304, would be) content-coded by `@svc/negotiate`, the tag
 *   is made weak: the identity bytes' strong tag must not label gzip bytes (RFC 9110 §8.8.3); the
 *   preconditions below are compared with that weak tag, the one the response sends;
 * - `If-Match` (strong comparison) or, without it, `If-Unmodified-Since` false → 412 error record
 *   in place of the 2xx (RFC 9110 §13.1.1, §13.1.4);
 * - `If-None-Match` (weak comparison, lists, `*`) or, without it, `If-Modified-Since` against
 *   `Last-Modified` → 304 with no body, keeping `ETag`, `Cache-Control`, `Content-Location`,
 *   `Date`, `Expires`, `Vary` (RFC 9110 §15.4.5);
 * - successful responses without `Cache-Control` get `defaultCacheControl`.
 *
 * Mount it after `negotiate()` and before the routes; it works with `res.send`/`res.json` and
 * with `res.represent`, and with `res.writeHead(status, headers).end(body)` (the head of a 2xx to a
 * GET or HEAD goes out with the body). Streamed bodies get no computed tag; their preconditions
 * are evaluated at the first write (or `flushHeaders()`), on the validators already set.
 *
 * @example
 * app.use(negotiate());
 * app.use(conditional());
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-13
 */
export function conditional(options: ConditionalOptions = {}) {
  const config = resolveConditionalConfig(options);
  const invalidEtag = new InvalidEtagWarning();
  return function conditionalMiddleware(req: IncomingMessage, res: ServerResponse, next: NextFunction): void {
    const revalidation = new Revalidation(req, res, config, invalidEtag);
    guardIfRange(req, res);
    (res as ServerResponse & { [REVALIDATED]?: true })[REVALIDATED] = true;
    const send = (res as Sendable).send;
    if (typeof send === "function") {
      (res as Sendable).send = function sendWithEtag(this: ServerResponse, ...args: unknown[]) {
        return revalidation.sendWithEtag(this, send, args);
      };
    }
    res.writeHead = function writeHeadLater(this: ServerResponse, ...args: unknown[]): ServerResponse {
      return revalidation.writeHead(this, args);
    } as ServerResponse["writeHead"];
    res.on("pipe", (source: NodeJS.ReadableStream) => revalidation.piped(source));
    const flushHeaders = res.flushHeaders;
    res.flushHeaders = function flushHeadersWithPreconditions(this: ServerResponse): void {
      revalidation.busy++;
      try {
        revalidation.flushHeaders(this, flushHeaders);
      } finally {
        revalidation.busy--;
      }
    };
    res.write = function writeWithPreconditions(this: ServerResponse, ...args: unknown[]): boolean {
      revalidation.busy++;
      try {
        return revalidation.write(this, args);
      } finally {
        revalidation.busy--;
      }
    } as ServerResponse["write"];
    res.end = function endWithEtag(this: ServerResponse, ...args: unknown[]): ServerResponse {
      revalidation.busy++;
      try {
        return revalidation.end(this, args);
      } finally {
        revalidation.busy--;
      }
    } as End;
    next();
  };
}
