import { type DecisionChannel, decisionChannel, publishDecision } from "@svc/kernel/internal";

/** The precondition that decided a request (RFC 9110 §13.1). */
export type PreconditionField = "If-None-Match" | "If-Modified-Since" | "If-Match" | "If-Unmodified-Since";

/**
 * What `svc:conditional` says of one request whose preconditions decided its answer: a 304
 * (`not-modified`), a 412 (`precondition-failed`) or a 428 (`precondition-required`).
 */
export interface ConditionalDiagnostic {
  /**
   * The framework's request (Express's `req`, Fastify's `request`, a Fetch `Request`, a
   * `node:http` request): what `exchangeOf` of `@svc/kernel` takes. What `checkPreconditions`
   * was given, when it is called directly.
   */
  readonly request: object | undefined;
  /** `not-modified` (304), `precondition-failed` (412) or `precondition-required` (428). */
  readonly decision: "not-modified" | "precondition-failed" | "precondition-required";
  /** The precondition that decided; `undefined` for a 428 (the write carried none). */
  readonly field: PreconditionField | undefined;
}

/**
 * The channel every decision of the package is published on: its name and whether anyone listens.
 * Listen with `subscribeDiagnostics(conditionalChannel.name, listener)` of `@svc/kernel` (or
 * `node:diagnostics_channel`). A message is built only when it has a subscriber: without one, a
 * decision costs one property read.
 *
 * @see https://nodejs.org/api/diagnostics_channel.html
 */
export const conditionalChannel: DecisionChannel<ConditionalDiagnostic> =
  decisionChannel<ConditionalDiagnostic>("svc:conditional");

/** Publishes a decision; call it only when {@link conditionalChannel} has subscribers. */
export function publishConditional(
  request: unknown,
  decision: ConditionalDiagnostic["decision"],
  field: PreconditionField | undefined,
): void {
  publishDecision(conditionalChannel, {
    request: typeof request === "object" && request !== null ? request : undefined,
    decision,
    field,
  });
}
