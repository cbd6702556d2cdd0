import { decisionChannel, tracedCall } from "@svc/kernel/internal";
import type { FingerprintKind } from "./fingerprint.js";

/**
 * What the `Idempotency-Key` step publishes on the channel `svc:idempotency`
 * (`subscribeDiagnostics` of `@svc/kernel`): one message per keyed request it looked up (a
 * request without a key, or one refused before the lookup, a missing or malformed key, publishes
 * nothing); one when a claimed execution ends; one when the store answers again after an outage.
 * The names and members are part of the package's API: a change is a breaking change.
 *
 * Looked up, one of:
 * - `claimed`: the key was free; this execution runs the request.
 * - `lease-expired`: the key was claimed by taking over an execution whose lease ran out (it
 *   died, or ran past its lease unrenewed): this execution runs the request, which the first may
 *   have run too. Only a store that keeps the expired record until the claim can tell
 *   (`PostgresStore`); with the others such a claim is `claimed`.
 * - `replayed`: the key's completed response is sent again.
 * - `in-progress`: the 409, the key's first execution still runs.
 * - `mismatch`: the 422, the key was used with another request; `fingerprint` names which
 *   fingerprint compared them (`"default"`, or the `fingerprint` option's kind).
 * - `store-failed`: the store did not answer; `onStoreError` decided (`passed`: run unprotected).
 *
 * A claimed execution's end, when the store did what was asked (a claim whose lease was lost
 * meanwhile publishes nothing; the logger says so):
 * - `completed`: its response (`status`) is stored under the key; retries replay it.
 * - `released`: the key is free again, no response stored: `reason` `"not-stored"` when
 *   `storeStatus` kept `status` out (a 5xx, or a 4xx before the endpoint started), `"failed"`
 *   when the execution failed (the handler threw, its response stream failed, the pipeline
 *   refused its result; or `release` was called on the core).
 *
 * And `store-recovered`: the first store call answered after failures (no request), `downMs`
 * after the first of them.
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
      readonly decision: "claimed" | "lease-expired" | "replayed" | "in-progress";
      /** The scope the key was looked up in (`u:<principal>`, or the `scope` option's). */
      readonly scope: string;
    }
  | {
      readonly request: object | undefined;
      readonly decision: "mismatch";
      readonly scope: string;
      /**
       * Which fingerprint compared the requests: `"default"` (method, target, whole body), or the
       * `fingerprint` option's `"pointers"` or `"function"`. A burst of mismatches after a change
       * of the option is records stored under the previous fingerprint, not clients misusing keys.
       */
      readonly fingerprint: FingerprintKind;
    }
  | {
      readonly request: object | undefined;
      readonly decision: "store-failed";
      readonly scope: string;
      /** Whether the request ran unprotected (`onStoreError: "pass-through"`) or got the 503. */
      readonly passed: boolean;
      readonly error: unknown;
    }
  | {
      readonly request: object | undefined;
      readonly decision: "completed";
      readonly scope: string;
      /** The status of the stored response, the one retries get. */
      readonly status: number;
    }
  | {
      readonly request: object | undefined;
      readonly decision: "released";
      readonly scope: string;
      /** The status `storeStatus` did not store. */
      readonly reason: "not-stored";
      readonly status: number;
    }
  | {
      readonly request: object | undefined;
      readonly decision: "released";
      readonly scope: string;
      /** The execution failed, or `release` was called. */
      readonly reason: "failed";
    }
  | {
      readonly decision: "store-recovered";
      /** Milliseconds from the first failure to this answer. */
      readonly downMs: number;
    };

/**
 * The context of one store call on the tracing channels `svc:idempotency:store`
 * (`tracing:svc:idempotency:store:start|end|asyncStart|asyncEnd|error`), around each call of
 * `RedisStore`, `PostgresStore` and `DurableObjectStore`; the `MemoryStore` answers in process
 * and is not traced.
 * @example
 * diagnostics_channel.tracingChannel("svc:idempotency:store").subscribe({ asyncEnd: (c) => console.log(c) });
 * @see https://nodejs.org/api/diagnostics_channel.html#class-tracingchannel
 */
export interface IdempotencyStoreCall {
  readonly store: "redis" | "postgres" | "durable-object";
  /**
   * The store method: `commit` is `PostgresStore.commit`, on the handler's own transaction;
   * `recorded` asks a `PostgresStore` what a failed execution committed.
   */
  readonly operation: "claim" | "complete" | "release" | "renew" | "recorded" | "commit";
  /** The key as stored (the Redis key, the table's `key`, the Durable Object's name). */
  readonly key: string;
}

/** @internal The channel of every decision. */
export const decisions = decisionChannel<IdempotencyDiagnostic>("svc:idempotency");

/** @internal The tracing channels of the stores' calls. */
export const storeCalls = tracedCall<IdempotencyStoreCall>("svc:idempotency:store");
