import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from "node:http";
import { HttpError, type NextFunction } from "@svc/errors";
import { listMatches, parseEtagList } from "./entity-tag.js";

/** The validators of a resource's current state, as {@link preconditions} needs them. */
export interface CurrentValidators {
  /** The current representation's entity tag (`"v7"` or `W/"v7"`). */
  etag?: string | undefined;
  /** When the resource last changed. */
  lastModified?: Date | undefined;
}

/** The outcome of {@link evaluatePreconditions}: go on, or answer 304 / 412 instead. */
export type PreconditionOutcome = "proceed" | 304 | 412;

function httpDate(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  // RFC 9110 §5.6.7: HTTP-date only; Date.parse is lenient, so insist on the IMF-fixdate shape
  // (the obsolete formats are rare enough to ignore, as the RFC permits a recipient to).
  if (!/^[A-Z][a-z]{2}, \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} GMT$/.test(value.trim()))
    return undefined;
  const t = Date.parse(value);
  return Number.isNaN(t) ? undefined : Math.floor(t / 1000);
}

function seconds(date: Date | undefined): number | undefined {
  return date === undefined || Number.isNaN(date.getTime()) ? undefined : Math.floor(date.getTime() / 1000);
}

/**
 * RFC 9110 §13.2.2, in its order, as a pure function:
 *
 * 1. `If-Match` present: false (→ 412) unless `*` and the resource exists, or a listed tag
 *    matches the current one by strong comparison;
 * 2. else `If-Unmodified-Since` (a valid date, resource with a known modification time):
 *    modified since → 412;
 * 3. `If-None-Match` present: `*` with an existing resource, or a tag matching by weak comparison
 *    → 304 for GET/HEAD, 412 otherwise;
 * 4. else for GET/HEAD, `If-Modified-Since` (a valid date, known modification time): not modified → 304.
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
  const safe = method === "GET" || method === "HEAD";
  const ifMatch = headers["if-match"];
  const ifNoneMatch = headers["if-none-match"];
  const lastModified = seconds(current?.lastModified);

  // Step 1.
  if (ifMatch !== undefined) {
    const list = parseEtagList(ifMatch);
    const ok =
      current !== undefined &&
      (list === "*" || (current.etag !== undefined && listMatches(list, current.etag, true)));
    if (!ok) return 412;
  } else {
    // Step 2: only "when If-Match is not present".
    const since = httpDate(headers["if-unmodified-since"]);
    if (since !== undefined && lastModified !== undefined && lastModified > since) return 412;
  }
  // Step 3.
  if (ifNoneMatch !== undefined) {
    const list = parseEtagList(ifNoneMatch);
    const matches =
      current !== undefined &&
      (list === "*" || (current.etag !== undefined && listMatches(list, current.etag, false)));
    if (matches) return safe ? 304 : 412;
  } else if (safe) {
    // Step 4: "when the method is GET or HEAD, If-None-Match is not present".
    const since = httpDate(headers["if-modified-since"]);
    if (since !== undefined && lastModified !== undefined && lastModified <= since) return 304;
  }
  return "proceed";
}

/** Options of {@link preconditions}. */
export interface PreconditionsOptions<Req extends IncomingMessage = IncomingMessage> {
  /**
   * Reads the target resource's current validators before the handler runs; `undefined` or
   * `null` when the resource does not exist (so `If-Match: *` fails and `If-None-Match: *` passes).
   */
  current: (req: Req) => CurrentValidators | undefined | null | Promise<CurrentValidators | undefined | null>;
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
 * an unconditional write becomes a 428. The validators are left on `res.locals.current` for the handler.
 *
 * @example
 * app.put("/employees/:id", preconditions({ current: (req) => repo.validators(req.params.id), required: true }), update);
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-13.2.2
 * @see https://www.rfc-editor.org/rfc/rfc6585#section-3
 */
export function preconditions<Req extends IncomingMessage = IncomingMessage>(
  options: PreconditionsOptions<Req>,
) {
  if (typeof options?.current !== "function") {
    throw new TypeError("preconditions: options.current must be a function returning the current validators");
  }
  const required = options.required ?? false;
  const requiredMethods = new Set(
    (options.requiredMethods ?? ["PUT", "PATCH", "DELETE"]).map((m) => m.toUpperCase()),
  );
  const read = options.current;

  return async function preconditionsMiddleware(
    req: Req,
    res: ServerResponse,
    next: NextFunction,
  ): Promise<void> {
    const method = (req.method ?? "GET").toUpperCase();
    const h = req.headers;
    const conditional =
      h["if-match"] !== undefined ||
      h["if-unmodified-since"] !== undefined ||
      h["if-none-match"] !== undefined ||
      h["if-modified-since"] !== undefined;
    if (
      required &&
      requiredMethods.has(method) &&
      h["if-match"] === undefined &&
      h["if-unmodified-since"] === undefined &&
      h["if-none-match"] === undefined
    ) {
      next(
        HttpError.preconditionRequired(
          `${method} requires a conditional request: send If-Match with the current ETag`,
          {
            code: "precondition_required",
          },
        ),
      );
      return;
    }
    let current: CurrentValidators | undefined;
    try {
      current = (await read(req)) ?? undefined;
    } catch (err) {
      next(err);
      return;
    }
    const locals = (res as ServerResponse & { locals?: Record<string, unknown> }).locals;
    if (locals) locals.current = current;
    if (!conditional) {
      next();
      return;
    }
    const outcome = evaluatePreconditions(method, h, current);
    if (outcome === "proceed") {
      next();
      return;
    }
    const headers: Record<string, string> = {};
    if (current?.etag !== undefined) headers.ETag = current.etag;
    if (current?.lastModified !== undefined) headers["Last-Modified"] = current.lastModified.toUTCString();
    if (outcome === 304) {
      for (const [k, v] of Object.entries(headers)) res.setHeader(k, v);
      res.statusCode = 304;
      res.end();
      return;
    }
    next(
      HttpError.preconditionFailed(
        current === undefined
          ? "The resource does not exist"
          : "The resource has changed since the precondition was computed",
        { code: "precondition_failed", headers },
      ),
    );
  };
}
