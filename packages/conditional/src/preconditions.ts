import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from "node:http";
import { HttpError, type NextFunction } from "@svc/errors";
import type { Gate, GateOutcome, RequestView } from "@svc/kernel";
import { checkBooleanOption, checkOptionNames, refusedOption } from "@svc/kernel/internal";
import {
  type CurrentState,
  type CurrentValidators,
  checkPreconditions,
  evaluateIfRange,
  guardsWrite,
  validatorHeaders,
  validatorsOf,
} from "./core.js";
import { parseEtagList } from "./entity-tag.js";
import { withDateLists } from "./http-date.js";
import { requiredMethodsOption } from "./options.js";

/** Options of {@link preconditions}. */
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
 * Evaluates conditional request headers against the resource's current validators before the
 * handler runs (RFC 9110 §13.2.2): a failed precondition becomes a 412 (or 304 for GET/HEAD), with
 * `ETag`/`Last-Modified` of the current state, through the error handler; with `required: true`,
 * an unconditional write becomes a 428. Step 5, `If-Range` on a GET with `Range`, is evaluated
 * on the current validators ({@link evaluateIfRange}); when false, the `Range` field is removed so
 * that whatever serves the range sends the whole representation. The validators are left on `res.locals.current` for the handler.
 *
 * @example
 * app.put("/employees/:id", preconditions({ current: (req) => repo.validators(req.params.id), required: true }), update);
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-13.2.2
 * @see https://www.rfc-editor.org/rfc/rfc6585#section-3
 */
export function preconditions<Req extends IncomingMessage = IncomingMessage>(
  options: PreconditionsOptions<Req>,
) {
  const config = resolvePreconditionsConfig(options);

  return async function preconditionsMiddleware(
    req: Req,
    res: ServerResponse,
    next: NextFunction,
  ): Promise<void> {
    let decision: PreconditionsDecision;
    try {
      decision = await decide(config, req, req, (current) => {
        const locals = (res as ServerResponse & { locals?: Record<string, unknown> }).locals;
        if (locals) locals.current = current;
      });
    } catch (err) {
      next(err);
      return;
    }
    if (decision.notModified === undefined) {
      if (decision.ignoreRange) delete req.headers.range;
      next();
      return;
    }
    for (const [name, value] of Object.entries(decision.notModified)) {
      if (value === null) res.removeHeader(name);
      else res.setHeader(name, value);
    }
    res.statusCode = 304;
    res.end();
  };
}

/**
 * {@link preconditions} as a gate of `@svc/kernel` (`Gate`): the framework-free decision that the
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
  const config = resolvePreconditionsConfig(options);
  return async function preconditionsGate(view, native): Promise<GateOutcome> {
    const decision = await decide(config, view, native);
    if (decision.notModified === undefined) {
      if (decision.ignoreRange) delete (view.headers as IncomingHttpHeaders).range;
      return undefined;
    }
    return { answer: { status: 304, fields: decision.notModified, vary: [], body: undefined } };
  };
}

/** What {@link decide} found: go on (dropping `Range` or not), or the 304's fields (`null`: remove). */
interface PreconditionsDecision {
  readonly ignoreRange: boolean;
  readonly notModified: Record<string, string | null> | undefined;
}

/**
 * RFC 9110 §13.2.2 for one request: 428 and 412 thrown, a 304's fields, or go on. `seen` is given
 * the current validators before they are compared.
 */
async function decide<Native>(
  config: PreconditionsConfig<Native>,
  req: Pick<RequestView, "method" | "headers" | "rawHeaders">,
  native: Native,
  seen?: (current: CurrentValidators | undefined) => void,
): Promise<PreconditionsDecision> {
  const method = (req.method ?? "GET").toUpperCase();
  if (config.required && config.requiredMethods.has(method) && !guardsWrite(withDateLists(req))) {
    throw HttpError.preconditionRequired(
      `${method} requires a conditional request: send If-Match with the current ETag`,
      { code: "precondition_required" },
    );
  }
  const current = await validatorsOf(req.headers, (await config.read(native)) ?? undefined);
  seen?.(current);
  // The fields as given: `headers` and `headersDistinct` are getters of a `node:http` request.
  const fields = {
    method,
    headers: req.headers,
    headersDistinct: (req as { headersDistinct?: NodeJS.Dict<string[]> }).headersDistinct,
    rawHeaders: req.rawHeaders,
  };
  const outcome = await checkPreconditions(fields, current);
  if (outcome === "proceed") {
    // RFC 9110 §13.2.2 step 5, after steps 1 to 4 held: a GET's If-Range on the current
    // validators of the selected representation (§13.1.5). False: "ignore the Range header
    // field and respond 200", so whatever serves the range (express.static, res.sendFile, the
    // handler) sees none. Left to send, a weak tag, a list of tags or any date not before
    // Last-Modified got the range.
    const { range, "if-range": ifRange } = req.headers;
    const ignoreRange =
      (method === "GET" || method === "HEAD") && range !== undefined && !evaluateIfRange(ifRange, current);
    return { ignoreRange, notModified: undefined };
  }
  // RFC 9110 §15.4.5: the 304 keeps the Cache-Control, Content-Location, Expires and Vary
  // already set on the response (Date is Node's), carries the current validators, and leaves
  // out the representation metadata an earlier middleware may have set.
  const notModified: Record<string, string | null> = {};
  for (const name of NOT_MODIFIED_DROP) notModified[name] = null;
  Object.assign(notModified, validatorHeaders(current));
  const held = heldTag(req.headers["if-none-match"], current?.etag);
  if (held !== undefined) notModified.ETag = held;
  return { ignoreRange: false, notModified };
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

/** The options of {@link preconditions}, checked and resolved once, at construction. */
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
 * Sets `Last-Modified` (whole seconds, IMF-fixdate) unless the date is invalid; one in the future
 * is sent as now (RFC 9110 §8.8.2.1: an origin server must not send a date later than its own
 * `Date`). The message's `Date` is set to that same now, unless the response already has one (then
 * Last-Modified is held to it): Node writes `Date` from a per-second cache that a timer refreshes,
 * which names an earlier second than now after the event loop was busy past a second boundary.
 *
 * @example setLastModified(res, employee.updatedAt)
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-8.8.2
 */
export function setLastModified(res: ServerResponse, date: Date, now: Date = new Date()): void {
  if (res.headersSent) return;
  for (const [name, value] of Object.entries(lastModifiedFields(date, res.getHeader("date"), now)))
    res.setHeader(name, value);
}

/**
 * The fields {@link setLastModified} sets, framework-free: `Last-Modified` (whole seconds, no
 * later than the message's origination, RFC 9110 §8.8.2.1) and `Date` when `given` (the response's
 * `Date`, if it has one) is none; `{}` for an invalid date.
 *
 * @example lastModifiedFields(employee.updatedAt, undefined) // { Date: "…", "Last-Modified": "…" }
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-8.8.2
 */
export function lastModifiedFields(
  date: Date,
  given: unknown,
  now: Date = new Date(),
): Record<string, string> {
  if (Number.isNaN(date.getTime())) return {};
  const fields: Record<string, string> = {};
  const origination = typeof given === "string" ? Date.parse(given) : Number.NaN;
  let limit = now.getTime();
  if (Number.isNaN(origination)) fields.Date = now.toUTCString();
  else limit = origination;
  fields["Last-Modified"] = (date.getTime() > limit ? new Date(limit) : date).toUTCString();
  return fields;
}
