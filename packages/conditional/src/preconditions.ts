import type { IncomingHttpHeaders, IncomingMessage } from "node:http";
import { HttpError } from "@svc/errors";
import type { Gate, GateOutcome, RequestView } from "@svc/kernel";
import { checkBooleanOption, checkOptionNames, refusedOption } from "@svc/kernel/internal";
import {
  type CurrentState,
  type CurrentValidators,
  checkedPreconditions,
  checkNow,
  checkValidators,
  evaluateIfRange,
  guardsWrite,
  validatorHeaders,
  validatorsOf,
} from "./core.js";
import { conditionalChannel, publishConditional } from "./diagnostics.js";
import { parseEtagList } from "./entity-tag.js";
import { withDateLists } from "./http-date.js";
import { requiredMethodsOption } from "./options.js";

/** Options of `preconditions()` (on each framework's entry) and {@link preconditionsGate}. */
export interface PreconditionsOptions<Req = IncomingMessage> {
  /**
   * Reads the target resource's current validators before the handler runs; `undefined` or
   * `null` when the resource does not exist (so `If-Match: *` fails and `If-None-Match: *` passes).
   * A resource with several representations gives one tag per representation
   * ({@link RepresentationTags}); the one the request names is compared (RFC 9110 §13.1.1).
   */
  current: (req: Req) => CurrentState | undefined | null | Promise<CurrentState | undefined | null>;
  /**
   * Demand a precondition (`If-Match`, `If-Unmodified-Since` or `If-None-Match`) on writes that
   * lack one → 428 (RFC 6585 §3), against lost updates.
   * @default false
   */
  required?: boolean;
  /**
   * The methods `required` applies to.
   * @default ["PUT", "PATCH", "DELETE"]
   */
  requiredMethods?: readonly string[];
}

/**
 * What RFC 9110 §13.2.2 decided for one request, before its handler: go on (without `Range` when
 * `ignoreRange`), or answer 304 with `notModified`'s fields (`null`: remove the field). A failed
 * precondition of a write is thrown (412; 428 when `required`), not returned.
 */
export interface PreconditionsDecision {
  /** The current validators of the representation the request names, as compared. */
  readonly current: CurrentValidators | undefined;
  /** Step 5: `If-Range` is false, so `Range` is to be ignored (the whole representation sent). */
  readonly ignoreRange: boolean;
  /** The 304's fields, or `undefined` to go on. */
  readonly notModified: Record<string, string | null> | undefined;
}

/**
 * The framework-free decision of `preconditions()` (each framework's entry mounts it): options
 * checked once, then, per request, the current validators read (`current(native)`) and compared
 * with the conditional fields of `view` (RFC 9110 §13.2.2). A failed precondition of a write
 * rejects with the 412 (428 when `required`).
 *
 * @example
 * const decide = preconditionsDecision<IncomingMessage>({ current: (req) => repo.validators(req.url) });
 * const { notModified } = await decide(req, req);
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-13.2.2
 */
export function preconditionsDecision<Native = IncomingMessage>(
  options: PreconditionsOptions<Native>,
): (
  view: Pick<RequestView, "method" | "headers" | "rawHeaders">,
  native: Native,
) => Promise<PreconditionsDecision> {
  const config = resolvePreconditionsConfig(options);
  return function preconditionsDecision(view, native) {
    return decide(config, view, native);
  };
}

/**
 * `preconditions()` as a gate of `@svc/kernel` (`Gate`): the framework-free decision that the
 * `node:http`, Fastify and Fetch entries mount (`nodeGate`, `fastifyGate`, `fetchGate`). A failed
 * precondition of a write throws the 412 (428 when `required`); a GET or HEAD the client holds
 * fresh is answered 304 with the current validators; otherwise the request passes. When step 5
 * (`If-Range`) is false, the `Range` field is removed from `view.headers` (the `node:http` request
 * itself on node:http, Express and Fastify), so whatever serves ranges sends the whole representation.
 *
 * @example
 * const gate = preconditionsGate<IncomingMessage>({ current: (req) => repo.validators(req.url) });
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-13.2.2
 */
export function preconditionsGate<Native = IncomingMessage>(
  options: PreconditionsOptions<Native>,
): Gate<Native> {
  const decideFor = preconditionsDecision(options);
  return async function preconditionsGate(view, native): Promise<GateOutcome> {
    const decision = await decideFor(view, native);
    if (decision.notModified === undefined) {
      if (decision.ignoreRange) delete (view.headers as IncomingHttpHeaders).range;
      return undefined;
    }
    return { answer: { status: 304, fields: decision.notModified, vary: [], body: undefined } };
  };
}

/** RFC 9110 §13.2.2 for one request: 428 and 412 thrown, a 304's fields, or go on. */
async function decide<Native>(
  config: PreconditionsConfig<Native>,
  req: Pick<RequestView, "method" | "headers" | "rawHeaders">,
  native: Native,
): Promise<PreconditionsDecision> {
  const method = (req.method ?? "GET").toUpperCase();
  if (config.required && config.requiredMethods.has(method) && !guardsWrite(withDateLists(req))) {
    if (conditionalChannel.hasSubscribers) publishConditional(native, "precondition-required", undefined);
    throw HttpError.preconditionRequired(
      `${method} requires a conditional request: send If-Match with the current ETag`,
      { code: "precondition_required" },
    );
  }
  const current = await validatorsOf(req.headers, (await config.read(native)) ?? undefined);
  checkValidators(current, "preconditions: current()");
  // The fields as given: `headers` and `headersDistinct` are getters of a `node:http` request.
  const fields = {
    method,
    headers: req.headers,
    headersDistinct: (req as { headersDistinct?: NodeJS.Dict<string[]> }).headersDistinct,
    rawHeaders: req.rawHeaders,
  };
  const outcome = await checkedPreconditions(fields, current, native, "preconditions: current()");
  if (outcome === "proceed") {
    // RFC 9110 §13.2.2 step 5, after steps 1 to 4 held: a GET's If-Range on the current
    // validators of the selected representation (§13.1.5). False: "ignore the Range header
    // field and respond 200", so whatever serves the range (express.static, res.sendFile, the
    // handler) sees none. Left to send, a weak tag, a list of tags or any date not before
    // Last-Modified got the range.
    const { range, "if-range": ifRange } = req.headers;
    const ignoreRange =
      (method === "GET" || method === "HEAD") && range !== undefined && !evaluateIfRange(ifRange, current);
    return { current, ignoreRange, notModified: undefined };
  }
  // RFC 9110 §15.4.5: the 304 keeps the Cache-Control, Content-Location, Expires and Vary
  // already set on the response (Date is Node's), carries the current validators, and leaves
  // out the representation metadata an earlier middleware may have set.
  const notModified: Record<string, string | null> = {};
  for (const name of NOT_MODIFIED_DROP) notModified[name] = null;
  Object.assign(notModified, validatorHeaders(current));
  const held = heldTag(req.headers["if-none-match"], current?.etag);
  if (held !== undefined) notModified.ETag = held;
  return { current, ignoreRange: false, notModified };
}

/**
 * RFC 9110 §15.4.5: a 304 "SHOULD NOT generate representation metadata other than the above listed
 * fields" (Content-Location, Date, ETag, Vary, Cache-Control, Expires): these go, those stay.
 */
const NOT_MODIFIED_DROP = [
  "Content-Type",
  "Content-Length",
  "Content-Language",
  "Content-Range",
  "Transfer-Encoding",
  "Content-Encoding",
];

/** The options of `preconditions()`, checked and resolved once, at construction. */
interface PreconditionsConfig<Req> {
  read: PreconditionsOptions<Req>["current"];
  required: boolean;
  /** Upper-cased. */
  requiredMethods: ReadonlySet<string>;
}

function resolvePreconditionsConfig<Req>(options: PreconditionsOptions<Req>): PreconditionsConfig<Req> {
  checkOptionNames("conditional", options, ["current", "required", "requiredMethods"], "preconditions");
  if (typeof options?.current !== "function") {
    throw refusedOption(
      "conditional",
      "current",
      options?.current,
      "a function returning the current validators",
      "preconditions: current",
    );
  }
  checkBooleanOption("conditional", "required", options.required, "preconditions: required");
  return {
    read: options.current,
    required: options.required ?? false,
    requiredMethods: requiredMethodsOption(options.requiredMethods, "preconditions"),
  };
}

/**
 * The ETag for a 304 that `If-None-Match` earned: the current tag as the client holds it. RFC 9110
 * §15.4.5 has the 304 carry the ETag the 200 would have; the handler did not run, but when the
 * 200 is content-coded (by `@svc/negotiate`, say) its tag is the weak form of the current strong
 * one (§8.8.3), and a client that names only that weak form got it from such a 200. Sending the
 * strong form back would leave its stored response unrefreshed (RFC 9111 §4.3.4: a cache updates
 * the stored responses with the 304's strong validator, and it holds none). `undefined`: the
 * current tag as it is.
 */
function heldTag(ifNoneMatch: string | undefined, etag: string | undefined): string | undefined {
  if (ifNoneMatch === undefined || etag === undefined || !etag.startsWith('"')) return undefined;
  const list = parseEtagList(ifNoneMatch);
  if (list === "*") return undefined;
  const named = list.filter((t) => t.opaque === etag);
  return named.length > 0 && named.every((t) => t.weak) ? `W/${etag}` : undefined;
}

/**
 * The fields `setLastModified` (of each framework's entry) sets, framework-free: `Last-Modified` (whole seconds, no
 * later than the message's origination, RFC 9110 §8.8.2.1) and `Date` when `given` (the response's
 * `Date`, if it has one) is none; `{}` for an invalid date.
 *
 * A `date` that is no `Date` (`undefined`, a date string, a number of milliseconds) is refused with
 * a `TypeError` of code `ERR_SVC_CONDITIONAL_DATE`, a `now` that is no valid `Date` with
 * `ERR_SVC_CONDITIONAL_NOW`: neither names a moment the fields could state.
 *
 * @example lastModifiedFields(employee.updatedAt, undefined) // { Date: "…", "Last-Modified": "…" }
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-8.8.2
 */
export function lastModifiedFields(date: Date, given: unknown, now?: Date): Record<string, string> {
  // The adapters' setLastModified and lastModified call this with their own arguments, so the
  // refusal names this function; the argument names are theirs too.
  if (!(date instanceof Date))
    throw refusedOption(
      "conditional",
      "date",
      date,
      "a Date: when the representation last changed",
      "lastModifiedFields: date",
    );
  checkNow(now, "lastModifiedFields");
  if (Number.isNaN(date.getTime())) return {};
  const at = now ?? new Date();
  const fields: Record<string, string> = {};
  const origination = typeof given === "string" ? Date.parse(given) : Number.NaN;
  let limit = at.getTime();
  if (Number.isNaN(origination)) fields.Date = at.toUTCString();
  else limit = origination;
  fields["Last-Modified"] = (date.getTime() > limit ? new Date(limit) : date).toUTCString();
  return fields;
}
