import { HttpError } from "@svc/kernel";
import { type DecisionChannel, decisionChannel, publishDecision } from "@svc/kernel/internal";

/** What `svc:negotiate` says of one request: a refusal, or a response body compressed. */
export type NegotiateDiagnostic =
  | {
      /** The framework's request: what `exchangeOf` of `@svc/kernel` takes. */
      readonly request: object | undefined;
      /** 406: no representation, or no content coding, the request accepts. */
      readonly decision: "not-acceptable";
      /** What was offered: media types (`application/json`), or codings (`gzip`, `identity`). */
      readonly offered: readonly string[];
    }
  | {
      readonly request: object | undefined;
      /** 415: a request body of a type, charset or content coding the parser does not read. */
      readonly decision: "unsupported-media-type";
      /** The request's `Content-Type`, as sent. */
      readonly contentType: string | undefined;
      /**
       * `content-coding` when the body's `Content-Encoding` was refused (a coding not enabled in
       * `contentCodings`, unknown, or stacked more than twice); absent for a type or charset.
       */
      readonly reason?: "content-coding";
    }
  | {
      readonly request: object | undefined;
      /** A response body compressed. */
      readonly decision: "coded";
      /** The content coding applied: `gzip`, `br`, `zstd` or `deflate`. */
      readonly coding: string;
    }
  | {
      readonly request: object | undefined;
      /**
       * A CORS request not shared: its `Origin` is not allowed (`reason: "origin"`; the response
       * carries no `Access-Control-Allow-Origin`), or an allowed origin's preflight asked for
       * private network access that `privateNetwork` does not grant (`reason: "private-network"`).
       */
      readonly decision: "cross-origin-refused";
      /** The request's `Origin`, as sent. */
      readonly origin: string;
      readonly reason: "origin" | "private-network";
    }
  | {
      readonly request: object | undefined;
      /** The body parser refused the request's content (413, 400, 408). */
      readonly decision: "body-refused";
      /**
       * Why: `too-large` (413), `too-deep`, `malformed`, `inexact-number`, `doctype`,
       * `xml-version`, `processing-instruction`, `too-many-elements`, `too-many-attributes`,
       * `too-many-namespaces`, `too-many-pairs`, `key-too-long`, `value-too-long` (a form's
       * bounds), `unreadable` (the stream failed), `timeout` (408),
       * `decoded-too-large` (413: a coded body decoding past `limit`), `bad-coding` (400: the
       * content is not in the coding its `Content-Encoding` names).
       */
      readonly reason: string;
    };

/**
 * The channel the package's decisions are published on: its name and whether anyone listens.
 * Listen with `subscribeDiagnostics(negotiateChannel.name, listener)` of `@svc/kernel` (or
 * `node:diagnostics_channel`). A message is built only when it has a subscriber: without one, a
 * decision costs one property read.
 *
 * @see https://nodejs.org/api/diagnostics_channel.html
 */
export const negotiateChannel: DecisionChannel<NegotiateDiagnostic> =
  decisionChannel<NegotiateDiagnostic>("svc:negotiate");

/** The framework's request, as a message's `request`. */
export function nativeOf(native: unknown): object | undefined {
  return typeof native === "object" && native !== null ? native : undefined;
}

/** `not-acceptable` on `svc:negotiate`; call it only when the channel has subscribers. */
export function publishNotAcceptable(native: unknown, offered: readonly string[]): void {
  publishDecision(negotiateChannel, {
    request: nativeOf(native),
    decision: "not-acceptable",
    offered: [...offered],
  });
}

/**
 * A refusal of the body reader that says why, where its status and code do not (`too-deep` and
 * `malformed` are both 400 `malformed_body`): the `HttpError` answered, carrying the `reason` of
 * its `svc:negotiate` message from where the refusal is made.
 */
class BodyRefusal extends HttpError {
  readonly #reason: string;

  constructor(err: HttpError, reason: string) {
    super(err.status, err.message, {
      expose: err.expose,
      headers: err.headers,
      ...(err.code === undefined ? {} : { code: err.code }),
      ...(err.errors === undefined ? {} : { errors: err.errors }),
      ...(err.extensions === undefined ? {} : { extensions: err.extensions }),
      ...(err.cause === undefined ? {} : { cause: err.cause }),
    });
    this.#reason = reason;
  }

  /** The reason `err` was refused for, when it says one. */
  static reasonOf(err: HttpError): string | undefined {
    return #reason in err ? (err as BodyRefusal).#reason : undefined;
  }
}

/** `err`, refused for `reason`: what `svc:negotiate` says of it. */
export function because(err: HttpError, reason: string): HttpError {
  return new BodyRefusal(err, reason);
}

/** A refusal of the body reader on `svc:negotiate`: 415 or `body-refused`. */
export function publishBodyRefusal(native: unknown, contentType: unknown, err: unknown): void {
  if (!(err instanceof HttpError)) return;
  const request = nativeOf(native);
  if (err.status === 415) {
    const reason = BodyRefusal.reasonOf(err);
    publishDecision(negotiateChannel, {
      request,
      decision: "unsupported-media-type",
      contentType: typeof contentType === "string" ? contentType : undefined,
      ...(reason === "content-coding" ? { reason } : {}),
    });
    return;
  }
  const reason =
    BodyRefusal.reasonOf(err) ??
    (err.status === 413
      ? "too-large"
      : err.status === 408
        ? "timeout"
        : err.code === "unreadable_body"
          ? "unreadable"
          : err.code === "inexact_number"
            ? "inexact-number"
            : "malformed");
  publishDecision(negotiateChannel, { request, decision: "body-refused", reason });
}

/** `cross-origin-refused` on `svc:negotiate`; call it only when the channel has subscribers. */
export function publishCorsRefusal(
  native: unknown,
  origin: string,
  reason: "origin" | "private-network",
): void {
  publishDecision(negotiateChannel, {
    request: nativeOf(native),
    decision: "cross-origin-refused",
    origin,
    reason,
  });
}
