import type { DecisionMessage } from "@svc/kernel";
import { decisionChannel, publishDecision } from "@svc/kernel/internal";
import type { MapperDecision } from "./map-error.js";

/**
 * A message on the `svc:errors` channel: one per error record an adapter of this package renders,
 * 4xx and 5xx alike, on every framework. Its names and members are part of the package's API.
 *
 * @example
 * subscribeDiagnostics("svc:errors", (message) => {
 *   const { status, code } = message as ErrorDiagnostic;
 *   if (status >= 500) console.error(status, code);
 * });
 * @see https://nodejs.org/api/diagnostics_channel.html
 */
export interface ErrorDiagnostic {
  /**
   * The framework's request the record answers (Express's `req`, Fastify's `request`, a Fetch
   * `Request`, a `node:http` request): what `exchangeOf` takes. Absent for a request Node's HTTP
   * parser refused (`clientErrorHandler`), which no framework ever saw.
   */
  readonly request?: object;
  /** Always `"record"`: one error record rendered. */
  readonly decision: "record";
  /** The record's status. */
  readonly status: number;
  /** The record's `code` (the problem `type`'s last segment), when it has one. */
  readonly code: string | undefined;
  /** What was thrown, as it was thrown (not the `HttpError` it became). */
  readonly error: unknown;
  /**
   * Present when a `mapError` mapper decided the record: its place in the list (`index`, 0 for a
   * single function) and `outcome`, `"mapped"` (it returned the record's `HttpError`), `"threw"`
   * or `"invalid"` (it returned neither an `HttpError` nor `undefined`; the record is the 500).
   */
  readonly mapper?: MapperDecision;
  /**
   * Present when a renderer of the `renderers` option rendered the error instead of the record
   * (a SOAP fault): its `name`.
   */
  readonly renderer?: string;
}

/** Every `ErrorDiagnostic` is a kernel `DecisionMessage`. */
type Checked = ErrorDiagnostic extends DecisionMessage ? ErrorDiagnostic : never;

/** The `svc:errors` channel. */
export const errorsChannel = decisionChannel<Checked>("svc:errors");

/** Publishes one rendered record: call only when `errorsChannel.hasSubscribers`. */
export function publishRecord(
  request: object | undefined,
  status: number,
  code: string | undefined,
  error: unknown,
  mapper?: MapperDecision,
  renderer?: string,
): void {
  const message: { -readonly [K in keyof ErrorDiagnostic]: ErrorDiagnostic[K] } =
    request === undefined
      ? { decision: "record", status, code, error }
      : { request, decision: "record", status, code, error };
  if (mapper !== undefined) message.mapper = mapper;
  if (renderer !== undefined) message.renderer = renderer;
  publishDecision(errorsChannel, message);
}
