import type { IncomingHttpHeaders } from "node:http";
import { HttpError } from "@svc/errors";
import { checkOptionType, refusedOption, requireOptionType } from "@svc/kernel/internal";
import { conditionalChannel, type PreconditionField, publishConditional } from "./diagnostics.js";
import { isEntityTag, listMatches, parseEtagList, strongMatch } from "./entity-tag.js";
import { parseHttpDate, withDateLists } from "./http-date.js";

/** The validators of a resource's current state, as {@link evaluatePreconditions} needs them. */
export interface CurrentValidators {
  /** The current representation's entity tag (`"v7"` or `W/"v7"`). */
  etag?: string | undefined;
  /** When the resource last changed. */
  lastModified?: Date | undefined;
}

/**
 * One current strong entity tag per representation of a resource, by representation name (a media
 * type, say), the default representation first. RFC 9110 §8.8.3: a tag labels one representation,
 * so the JSON and the XML of one state have different tags, and a client sends the tag of the one
 * it read. A tag may be given as a function, called only when the tags before it did not match
 * (serializing a second representation costs more than comparing the first one's tag); a function
 * that returns `undefined` (no tag for that representation) is skipped.
 *
 * @example
 * {
 *   "application/json": representationTag("application/json", undefined, json),
 *   "application/xml": async () => representationTag("application/xml", undefined, await toXml()),
 * }
 */
export type RepresentationTags = Readonly<
  Record<string, string | (() => string | undefined | Promise<string | undefined>)>
>;

/**
 * A resource's current state as {@link checkPreconditions} and {@link preconditions} read it: the
 * validators of {@link CurrentValidators}, with `etag` either one tag or one per representation.
 */
export interface CurrentState {
  /** The current entity tag, or the current strong tag of each representation. */
  etag?: string | RepresentationTags | undefined;
  /** When the resource last changed. */
  lastModified?: Date | undefined;
}

/** The outcome of {@link evaluatePreconditions}: go on, or answer 304 / 412 instead. */
export type PreconditionOutcome = "proceed" | 304 | 412;

/**
 * RFC 9110 §13.2.1: "a server MUST ignore the conditional request header fields defined by this
 * specification when received with a request method that does not involve the selection or
 * modification of a selected representation, such as CONNECT, OPTIONS, or TRACE".
 */
const WITHOUT_REPRESENTATION: ReadonlySet<string> = new Set(["CONNECT", "OPTIONS", "TRACE"]);

function seconds(date: Date | undefined): number | undefined {
  return date === undefined || Number.isNaN(date.getTime()) ? undefined : Math.floor(date.getTime() / 1000);
}

/**
 * RFC 9110 §13.2.2, in its order, as a pure function (for a GET or HEAD of a resource that does
 * not exist, none: §13.2.1, its 404 takes precedence; for CONNECT, OPTIONS and TRACE, none either:
 * §13.2.1 has them ignored):
 *
 * 1. `If-Match` present: false (→ 412) unless `*` and the resource exists, or a listed tag
 *    matches the current one by strong comparison;
 * 2. else `If-Unmodified-Since` (a valid date, resource with a known modification time):
 *    modified since → 412;
 * 3. `If-None-Match` present: `*` with an existing resource, or a tag matching by weak comparison
 *    → 304 for GET/HEAD, 412 otherwise;
 * 4. else for GET/HEAD, `If-Modified-Since` (a valid date, known modification time): not modified → 304.
 *
 * A current `etag` that is no entity-tag (`7` where `"7"` is meant, RFC 9110 §8.8.3) could match
 * no `If-Match` or `If-None-Match`: a request with a precondition throws a `TypeError` (code
 * `ERR_SVC_CONDITIONAL_INVALID_ETAG`) naming it, as {@link checkPreconditions} does, rather than
 * answer a 412 no retry can pass.
 *
 * Arguments of the wrong kind are refused with a `TypeError` naming them: a `method` that is not
 * a string (`ERR_SVC_CONDITIONAL_METHOD`); `headers` that are not an object of fields by name
 * (`ERR_SVC_CONDITIONAL_HEADERS`), a Fetch `Headers` included, whose fields are no properties and
 * would read as absent; a `current` neither an object nor `undefined`, or whose `lastModified` is
 * no `Date` (`ERR_SVC_CONDITIONAL_CURRENT`).
 *
 * @param current the resource's validators, or `undefined` when it does not exist
 * @example evaluatePreconditions("PUT", { "if-match": '"v1"' }, { etag: '"v2"' }) // → 412
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-13.2.2
 */
export function evaluatePreconditions(
  method: string,
  headers: IncomingHttpHeaders,
  current: CurrentValidators | undefined,
): PreconditionOutcome {
  requireOptionType(
    "conditional",
    "method",
    method,
    "string",
    'a string: the request method ("GET", "PUT")',
    "evaluatePreconditions: method",
  );
  checkHeaders(headers, "headers", "evaluatePreconditions: headers");
  checkValidators(current, "evaluatePreconditions: current");
  return decidePreconditions(method, headers, current).outcome;
}

/**
 * Refuses header fields that are not an object of fields by lower-case name: a Fetch `Headers`
 * (or a `Map`) holds its fields behind `get`, a list (`rawHeaders`) by position, so every
 * precondition would read as absent and the request go on unchecked.
 */
function checkHeaders(headers: unknown, option: string, label: string): void {
  if (
    typeof headers !== "object" ||
    headers === null ||
    typeof (headers as { get?: unknown }).get === "function" ||
    Array.isArray(headers)
  )
    throw refusedOption(
      "conditional",
      option,
      headers,
      "an object of header fields by lower-case name (node:http's req.headers), not a Fetch Headers or a list (Object.fromEntries(headers) makes one)",
      label,
    );
}

/**
 * Refuses current validators of the wrong kind, before any is read (code
 * `ERR_SVC_CONDITIONAL_CURRENT`; `label` names them): `current` neither an object nor `undefined`
 * (`null` and a list included: the core's "does not exist" is `undefined`), or a `lastModified`
 * that is no `Date` (a date string or milliseconds read from a database would otherwise fail
 * inside `getTime`, uncoded). An `etag` that is no string is no entity-tag
 * (`ERR_SVC_CONDITIONAL_INVALID_ETAG`). A few `typeof` tests per request, nothing allocated.
 */
export function checkValidators(current: unknown, label: string): void {
  if (current === undefined) return;
  if (typeof current !== "object" || current === null || Array.isArray(current))
    throw refusedOption(
      "conditional",
      "current",
      current,
      "an object of validators ({ etag?, lastModified? }), or undefined when the resource does not exist",
      label,
    );
  const { etag, lastModified } = current as CurrentValidators;
  if (etag !== undefined && typeof etag !== "string") checkCurrentTag(etag);
  if (lastModified !== undefined && !(lastModified instanceof Date))
    throw refusedOption(
      "conditional",
      "current",
      lastModified,
      "a Date or undefined: when the resource last changed",
      `${label}.lastModified`,
    );
}

/** An outcome of RFC 9110 §13.2.2 and the precondition that decided it (none to go on). */
export interface Decided {
  readonly outcome: PreconditionOutcome;
  readonly field: PreconditionField | undefined;
}

// One frozen value per outcome: deciding allocates nothing.
const PROCEED: Decided = Object.freeze({ outcome: "proceed", field: undefined });
const IF_MATCH_FAILED: Decided = Object.freeze({ outcome: 412, field: "If-Match" });
const IF_UNMODIFIED_SINCE_FAILED: Decided = Object.freeze({ outcome: 412, field: "If-Unmodified-Since" });
const IF_NONE_MATCH_FAILED: Decided = Object.freeze({ outcome: 412, field: "If-None-Match" });
const IF_NONE_MATCH_FRESH: Decided = Object.freeze({ outcome: 304, field: "If-None-Match" });
const IF_MODIFIED_SINCE_FRESH: Decided = Object.freeze({ outcome: 304, field: "If-Modified-Since" });

/** {@link evaluatePreconditions}, with the precondition that decided. */
export function decidePreconditions(
  method: string,
  headers: IncomingHttpHeaders,
  current: CurrentValidators | undefined,
): Decided {
  if (WITHOUT_REPRESENTATION.has(method)) return PROCEED;
  const safe = method === "GET" || method === "HEAD";
  // §13.2.1: "A server MUST ignore all received preconditions if its response to the same request
  // without those conditions, prior to processing the request content, would have been a status
  // code other than a 2xx (Successful) or 412". A GET or HEAD of a resource that does not exist
  // has no representation to answer 2xx with: its handler's 404 goes out, not a 412. (A write
  // may create the resource, a 2xx: `If-Match: *` fails there.)
  if (safe && current === undefined) return PROCEED;
  if (isConditional(headers)) checkCurrentTag(current?.etag);
  const ifMatch = headers["if-match"];
  const ifNoneMatch = headers["if-none-match"];
  const lastModified = seconds(current?.lastModified);

  // Step 1.
  if (ifMatch !== undefined) {
    const list = parseEtagList(ifMatch);
    const ok =
      current !== undefined &&
      (list === "*" || (current.etag !== undefined && listMatches(list, current.etag, true)));
    if (!ok) return IF_MATCH_FAILED;
  } else {
    // Step 2: only "when If-Match is not present".
    const since = parseHttpDate(headers["if-unmodified-since"]);
    if (since !== undefined && lastModified !== undefined && lastModified > since)
      return IF_UNMODIFIED_SINCE_FAILED;
  }
  // Step 3.
  if (ifNoneMatch !== undefined) {
    const list = parseEtagList(ifNoneMatch);
    const matches =
      current !== undefined &&
      (list === "*" || (current.etag !== undefined && listMatches(list, current.etag, false)));
    if (matches) return safe ? IF_NONE_MATCH_FRESH : IF_NONE_MATCH_FAILED;
  } else if (safe) {
    // Step 4: "when the method is GET or HEAD, If-None-Match is not present".
    const since = parseHttpDate(headers["if-modified-since"]);
    if (since !== undefined && lastModified !== undefined && lastModified <= since)
      return IF_MODIFIED_SINCE_FRESH;
  }
  return PROCEED;
}

/** Publishes on `svc:conditional` what `decided` says of `request`, when anyone listens. */
export function reportDecided(request: unknown, decided: Decided): void {
  if (!conditionalChannel.hasSubscribers || decided.outcome === "proceed") return;
  publishConditional(
    request,
    decided.outcome === 304 ? "not-modified" : "precondition-failed",
    decided.field,
  );
}

/**
 * Which representation's tag a request's preconditions are compared with, among several: the
 * one whose current tag the request names (`If-Match` by strong comparison, else `If-None-Match`
 * by weak comparison, RFC 9110 §13.1.1, §13.1.2), else the first, the default. The tags are
 * computed in order, only until one matches.
 */
async function selectedTag(
  headers: IncomingHttpHeaders,
  tags: RepresentationTags,
): Promise<string | undefined> {
  const ifMatch = headers["if-match"];
  const named = ifMatch ?? headers["if-none-match"];
  const list = named === undefined ? "*" : parseEtagList(named);
  let first: string | undefined;
  for (const given of Object.values(tags)) {
    const tag = typeof given === "function" ? await given() : given;
    if (tag === undefined) continue;
    if (list === "*" || listMatches(list, tag, ifMatch !== undefined)) return tag;
    first ??= tag;
  }
  return first;
}

/** The validators of `state`, its tag chosen among its representations' when it has several. */
export async function validatorsOf(
  headers: IncomingHttpHeaders,
  state: CurrentState | undefined,
): Promise<CurrentValidators | undefined> {
  if (state === undefined || typeof state.etag !== "object" || state.etag === null)
    return state as CurrentValidators | undefined;
  return { lastModified: state.lastModified, etag: await selectedTag(headers, state.etag) };
}

/** Whether the request carries any precondition of RFC 9110 §13.1. */
export function isConditional(headers: IncomingHttpHeaders): boolean {
  return (
    headers["if-match"] !== undefined ||
    headers["if-unmodified-since"] !== undefined ||
    headers["if-none-match"] !== undefined ||
    headers["if-modified-since"] !== undefined
  );
}

/**
 * The 412 of a failed precondition (RFC 9110 §15.5.13), as an `HttpError` for the error handler,
 * carrying the current `ETag` and `Last-Modified` so the client can refetch and retry. Also the
 * answer when a write finds, as it is applied, that the state its precondition was checked against
 * changed meanwhile (§13.1.1: the precondition must hold when the method is applied).
 *
 * A current `etag` that is no entity-tag (RFC 9110 §8.8.3) throws a `TypeError` (code
 * `ERR_SVC_CONDITIONAL_INVALID_ETAG`) instead: a 412 carrying it names a tag no retry can match.
 *
 * A `current` neither an object nor `undefined`, or whose `lastModified` is no `Date`, is a
 * `TypeError` of code `ERR_SVC_CONDITIONAL_CURRENT`.
 *
 * @param current the current validators, or `undefined` when the resource does not exist (any more)
 * @example throw preconditionFailed({ etag: '"v8"' })
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-15.5.13
 */
export function preconditionFailed(current: CurrentValidators | undefined): HttpError {
  checkValidators(current, "preconditionFailed: current");
  checkCurrentTag(current?.etag);
  return HttpError.preconditionFailed(
    current === undefined
      ? "The resource does not exist"
      : "The resource has changed since the precondition was computed",
    { code: "precondition_failed", headers: validatorHeaders(current) },
  );
}

/**
 * `ETag` and `Last-Modified` of the current state, for a 304 or a 412 (RFC 9110 §15.4.5). An
 * invalid date gives no `Last-Modified` (an HTTP-date, §8.8.2, not `Invalid Date`), and one in the
 * future goes out as now: RFC 9110 §8.8.2.1, "An origin server MUST NOT send a Last-Modified date
 * that is later than the server's time of message origination (Date)", and "if the last
 * modification date is in the future, the origin server MUST replace it with the message
 * origination date". The `Date` they were compared with is returned too, so the message's Date is
 * that instant and not an older second from Node's date cache.
 */
export function validatorHeaders(
  current: CurrentValidators | undefined,
  now: Date = new Date(),
): Record<string, string> {
  const headers: Record<string, string> = {};
  if (current?.etag !== undefined) headers.ETag = current.etag;
  const lastModified = current?.lastModified;
  if (lastModified !== undefined && !Number.isNaN(lastModified.getTime())) {
    headers["Last-Modified"] = (lastModified.getTime() > now.getTime() ? now : lastModified).toUTCString();
    // The Date that Last-Modified was checked against goes out with it: Node writes `Date` from a
    // per-second cache that a timer refreshes, so after the event loop was busy past a second
    // boundary its Date names an earlier second than a Last-Modified of now (§8.8.2.1, §6.6.1).
    headers.Date = now.toUTCString();
  }
  return headers;
}

/**
 * A current tag that is no entity-tag (`7` where `"7"` is meant) matches nothing, ever: every
 * `If-Match` would be a 412 carrying that same tag, which the client sends back to no avail, and
 * no `If-None-Match` ever earns a 304. It is the application's mistake, so it surfaces as one (a
 * 500, logged with this message) rather than as a precondition that no retry can satisfy, and the
 * tag is never sent (RFC 9110 §5.5: a sender generates only values matching the field's grammar).
 * RFC 9110 §8.8.3: `entity-tag = [ weak ] opaque-tag`, `opaque-tag = DQUOTE *etagc DQUOTE`.
 * (`validators()` meets such a tag on a reply, set by the handler, instead: it drops it
 * there, with a warning, and tags the body from its bytes.)
 */
function checkCurrentTag(etag: unknown): void {
  if (etag === undefined || isEntityTag(etag as string)) return;
  throw Object.assign(
    new TypeError(
      `the current ETag ${JSON.stringify(String(etag).slice(0, 100))} (of current() or the validators given) is not an entity-tag: quote it ("7" or W/"7"), RFC 9110 §8.8.3`,
    ),
    { code: "ERR_SVC_CONDITIONAL_INVALID_ETAG" },
  );
}

/**
 * RFC 9110 §13.2.2 for one request, over one or several representations, answering a failed
 * precondition itself: resolves to `"proceed"`, or `304` for a GET or HEAD whose copy is current;
 * rejects with {@link preconditionFailed}'s 412. The current state is read (when given as a
 * function) and its tags computed only when the request carries a precondition. Use it where the
 * middleware {@link preconditions} does not fit, such as inside the transaction of a write, to
 * evaluate the preconditions on the state the write is about to change (§13.1.1).
 *
 * A `req` that is no request (not an object, its `headers` no object of fields by name, as a
 * Fetch `Request`'s are not, or its `method` neither a string nor `undefined`) is refused with a
 * `TypeError` of code `ERR_SVC_CONDITIONAL_REQ`; a `current` of none of the kinds below, or one
 * read whose `lastModified` is no `Date`, with `ERR_SVC_CONDITIONAL_CURRENT`.
 *
 * @param current the resource's current state, `undefined`/`null` when it does not exist, or a
 *   function reading it
 * @example
 * await db.transaction(async (trx) => {
 *   await checkPreconditions(req, async () => ({
 *     etag: representationTag("application/json", undefined, await currentJson(trx)),
 *   }));
 *   await write(trx);
 * });
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-13.2.2
 */
export async function checkPreconditions(
  req: {
    method?: string | undefined;
    headers: IncomingHttpHeaders;
    headersDistinct?: NodeJS.Dict<string[]> | undefined;
  },
  current:
    | CurrentState
    | undefined
    | null
    | (() => CurrentState | undefined | null | Promise<CurrentState | undefined | null>),
): Promise<"proceed" | 304> {
  if (typeof req !== "object" || req === null)
    throw refusedOption(
      "conditional",
      "req",
      req,
      "a request: an object with the header fields as headers (node:http's IncomingMessage, Express's req)",
      "checkPreconditions: req",
    );
  checkHeaders(req.headers, "req", "checkPreconditions: req.headers");
  checkOptionType(
    "conditional",
    "req",
    req.method,
    "string",
    "a string or undefined: the request method, undefined for GET",
    "checkPreconditions: req.method",
  );
  if (
    current !== undefined &&
    current !== null &&
    typeof current !== "object" &&
    typeof current !== "function"
  )
    throw refusedOption(
      "conditional",
      "current",
      current,
      "the current state ({ etag?, lastModified? }), undefined or null when the resource does not exist, or a function returning one",
      "checkPreconditions: current",
    );
  return checkedPreconditions(req, current, req, "checkPreconditions: current");
}

/**
 * {@link checkPreconditions}, its decision published on `svc:conditional` about `native` (the
 * framework's request); `label` names the current state in the `TypeError` refusing it.
 */
export async function checkedPreconditions(
  req: Parameters<typeof checkPreconditions>[0],
  current: Parameters<typeof checkPreconditions>[1],
  native: unknown,
  label: string,
): Promise<"proceed" | 304> {
  const method = (req.method ?? "GET").toUpperCase();
  if (!isConditional(req.headers) || WITHOUT_REPRESENTATION.has(method)) return "proceed";
  const state = typeof current === "function" ? await current() : current;
  const validators = await validatorsOf(req.headers, state ?? undefined);
  checkValidators(validators, label);
  checkCurrentTag(validators?.etag);
  // A date precondition sent on several field lines is a list, to be ignored (RFC 9110 §5.3, §13.1.3, §13.1.4).
  const headers = withDateLists(req);
  const decided = decidePreconditions(method, headers, validators);
  if (conditionalChannel.hasSubscribers) reportDecided(native, decided);
  if (decided.outcome === 412) throw preconditionFailed(validators);
  return decided.outcome;
}

/**
 * RFC 9110 §13.1.5, the If-Range condition, for a handler that serves ranges: whether the range
 * may be sent (206) on the current validators of the selected representation, or the Range header
 * field must be ignored and the whole representation sent ("A recipient of an If-Range header
 * field MUST ignore the Range header field if the If-Range condition evaluates to false").
 *
 * - An entity-tag holds only when it matches the current `etag` by the strong comparison
 *   (§8.8.3.2): a weak tag, on either side, never does.
 * - An HTTP-date holds only when it exactly matches `lastModified` and that is a strong validator
 *   (§8.8.2.2): at least a second before `now`, the message's Date, so that it cannot have
 *   changed twice within the second it names.
 * - Anything else (`W/"a"x`, two tags, an empty value, a date in another form) holds for no
 *   representation: false.
 *
 * Only for a GET with `Range` (§13.2.2 step 5), after the other preconditions held ("A server MUST
 * ignore an If-Range header field received in a request that does not contain a Range header
 * field"); `ifRange` undefined (no If-Range) holds.
 *
 * Arguments of the wrong kind are refused with a `TypeError` naming them: an `ifRange` neither a
 * string, a list of strings nor `undefined` (`ERR_SVC_CONDITIONAL_IF_RANGE`; `null` included), a
 * `current` neither an object nor `undefined` or whose `lastModified` is no `Date`
 * (`ERR_SVC_CONDITIONAL_CURRENT`), a `now` that is no valid `Date` (`ERR_SVC_CONDITIONAL_NOW`).
 *
 * @param now the message's Date, the current time when `undefined`
 * @example evaluateIfRange(req.headers["if-range"], { etag: '"s1"' }) // → true for '"s1"', false for 'W/"s1"'
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-13.1.5
 */
export function evaluateIfRange(
  ifRange: string | readonly string[] | undefined,
  current: CurrentValidators | undefined,
  now?: Date,
): boolean {
  if (typeof ifRange !== "string" && ifRange !== undefined && !isFieldLines(ifRange))
    throw refusedOption(
      "conditional",
      "ifRange",
      ifRange,
      "a string, a list of strings (one per field line) or undefined: the If-Range field value, undefined when there is none",
      "evaluateIfRange: ifRange",
    );
  checkValidators(current, "evaluateIfRange: current");
  checkNow(now, "evaluateIfRange");
  if (ifRange === undefined) return true;
  // Several field lines are a list (RFC 9110 §5.3): no one entity-tag or HTTP-date.
  if (typeof ifRange !== "string")
    return ifRange.length === 1 && ifRangeHolds(ifRange[0] as string, current, now);
  return ifRangeHolds(ifRange, current, now);
}

/** Whether `value` is a list of field lines, each a string. */
function isFieldLines(value: unknown): boolean {
  if (!Array.isArray(value)) return false;
  for (const line of value) if (typeof line !== "string") return false;
  return true;
}

/**
 * Refuses a `now` that is no valid `Date` (code `ERR_SVC_CONDITIONAL_NOW`): an `Invalid Date`
 * would compare false with every date and be sent as `Date: Invalid Date`.
 */
export function checkNow(now: unknown, caller: string): void {
  if (now === undefined || (now instanceof Date && !Number.isNaN(now.getTime()))) return;
  throw refusedOption(
    "conditional",
    "now",
    now,
    "a valid Date or undefined: the message's origination time, undefined for the current time",
    `${caller}: now`,
  );
}

/** The If-Range condition of one field value, its arguments checked. */
function ifRangeHolds(
  ifRange: string,
  current: CurrentValidators | undefined,
  now: Date | undefined,
): boolean {
  if (current === undefined) return false;
  if (isEntityTag(ifRange)) return current.etag !== undefined && strongMatch(ifRange, current.etag);
  const date = parseHttpDate(ifRange);
  const modified = seconds(current.lastModified);
  if (date === undefined || modified === undefined || date !== modified) return false;
  // The clock is read only for a date that matched, and no Date is made for it.
  return modified < Math.floor((now === undefined ? Date.now() : now.getTime()) / 1000);
}

/** Whether a write carries a precondition that protects it against a lost update (RFC 6585 §3). */
export function guardsWrite(headers: IncomingHttpHeaders): boolean {
  // RFC 9110 §13.1.4: "A recipient MUST ignore the If-Unmodified-Since header field if the
  // received field value is not a valid HTTP-date": one that is not a date leaves the write
  // unconditional, which is what 428 refuses.
  // Likewise an If-None-Match naming no entity-tag (empty, or only malformed members, which
  // never match): "the condition is true if none of the listed tags match" (§13.1.2), for every
  // state of the resource, so it guards nothing. An If-Match of that kind is false instead (412).
  const ifNoneMatch = headers["if-none-match"];
  const named = ifNoneMatch === undefined ? [] : parseEtagList(ifNoneMatch);
  return (
    headers["if-match"] !== undefined ||
    parseHttpDate(headers["if-unmodified-since"]) !== undefined ||
    named === "*" ||
    named.length > 0
  );
}
