import { diagnosticChannel } from "@svc/kernel/internal";

/**
 * What the `Idempotency-Key` step publishes on the channel `svc:idempotency`
 * (`subscribeDiagnostics` of `@svc/kernel`), one message per keyed request it looked up; a
 * request without a key, or one refused before the lookup (a missing or malformed key), publishes
 * nothing. The names and members are part of the package's API: a change is a breaking change.
 *
 * - `claimed`: the key was free; this execution runs the request.
 * - `replayed`: the key's completed response is sent again.
 * - `in-progress`: the 409, the key's first execution still runs.
 * - `mismatch`: the 422, the key was used with another request.
 * - `store-failed`: the store did not answer; `onStoreError` decided (`passed`: run unprotected).
 *
 * @example
 * subscribeDiagnostics("svc:idempotency", (message) => {
 *   const m = message as IdempotencyDiagnostic;
 *   if (m.decision === "mismatch") console.warn("key reused", m.scope);
 * });
 * @see https://datatracker.ietf.org/doc/html/draft-ietf-httpapi-idempotency-key-header#section-2.7
 */
export type IdempotencyDiagnostic =
  | {
      /** The framework's request (Express's `req`, Fastify's `request`, a Fetch `Request`); absent when `begin` was given none. */
      readonly request: object | undefined;
      readonly decision: "claimed" | "replayed" | "in-progress" | "mismatch";
      /** The scope the key was looked up in (`u:<principal>`, or the `scope` option's). */
      readonly scope: string;
    }
  | {
      readonly request: object | undefined;
      readonly decision: "store-failed";
      readonly scope: string;
      /** Whether the request ran unprotected (`onStoreError: "pass-through"`) or got the 503. */
      readonly passed: boolean;
      readonly error: unknown;
    };

/** @internal The channel of every decision. */
export const decisions = diagnosticChannel<IdempotencyDiagnostic>("svc:idempotency");
