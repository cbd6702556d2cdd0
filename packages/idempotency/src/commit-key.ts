import type { OutgoingHttpHeaders } from "node:http";
import type { Claim, FieldValue, Reply } from "@svc/kernel";
import { HttpError } from "@svc/kernel";
import { utf8Bytes } from "@svc/kernel/internal";
import { IDEMPOTENCY_ERROR_CODES, toStored } from "./core.js";
import { ClaimLostError, type PgQueryable, PostgresStore } from "./postgres-store.js";
import { claimState } from "./step.js";

/**
 * The outcome {@link commitKey} records: the handler's `Reply` (its status and fields; its bytes
 * when it carries bytes, none for data, which the pipeline represents after the handler), or a
 * status, fields and bytes of its own. A retry meets it only when the response the pipeline then
 * makes is never recorded (a failure after the commit, a crash); otherwise that response, of the
 * same status, replaces it.
 */
export type CommittedResponse =
  | Reply
  | {
      readonly status: number;
      readonly headers?: Readonly<Record<string, FieldValue>> | undefined;
      readonly body?: Uint8Array | string | undefined;
    };

/**
 * Records the key's outcome inside the handler's own database transaction, so that the effect the
 * key protects and the response a retry replays commit together or not at all (Stripe's
 * "idempotency keys in the same transaction" design), under the unique constraint on the scoped key.
 * Run it on the transaction's connection, between its `BEGIN` and `COMMIT`, after the writes.
 *
 * Once committed, the claim is never released: a failure after the commit (the read that builds
 * the response, a 412 or 406 of the pipeline) answers with `response` as its replay would, and a
 * retry after a crash, a lost connection or an unreachable store replays it; the handler never
 * runs twice. `client` is anything with `query(text, values)` answering `{ rows }`: a `pg`
 * `PoolClient`, or Kysely's transaction as
 * `{ query: (text, values) => trx.executeQuery(CompiledQuery.raw(text, values)) }`.
 *
 * Resolves `true` when recorded; `false`, recording nothing, for a request without a key
 * (`claim` undefined) or a store other than {@link PostgresStore} (the response is then recorded
 * after the handler, as always: at most once per lease, see the README's guarantees). Rejects
 * with a 409 `HttpError` (`Retry-After`, cause {@link ClaimLostError}) when the claim is no longer
 * this execution's (its lease ran out and a retry claimed the key): let it roll the transaction back.
 *
 * @example
 * app.post("/transfers", express.json(), svc.handle(async (req, { claim }) => {
 *   const client = await pool.connect();
 *   try {
 *     await client.query("BEGIN");
 *     const { rows } = await client.query("INSERT INTO transfers (amount) VALUES ($1) RETURNING id", [req.body.amount]);
 *     const answer = reply.empty({ status: 201, headers: { location: `/transfers/${rows[0].id}` } });
 *     await commitKey(claim, client, answer);
 *     await client.query("COMMIT");
 *     return answer;
 *   } catch (err) {
 *     await client.query("ROLLBACK");
 *     throw err;
 *   } finally {
 *     client.release();
 *   }
 * }, { idempotency: keys }));
 * @see https://datatracker.ietf.org/doc/html/draft-ietf-httpapi-idempotency-key-header#section-2.6
 */
export async function commitKey(
  claim: Claim | undefined,
  client: PgQueryable,
  response: CommittedResponse,
): Promise<boolean> {
  if (claim === undefined) return false;
  const state = claimState(claim);
  if (state === undefined) {
    throw new TypeError("idempotency: commitKey needs the claim the idempotency step gave the handler");
  }
  if (typeof (client as Partial<PgQueryable> | null)?.query !== "function") {
    throw new TypeError("idempotency: commitKey needs a client with query(text, values)");
  }
  const { config, inner } = state;
  const store = config.store;
  if (!(store instanceof PostgresStore)) return false;
  const stored = toStored(
    {
      status: response.status,
      headers: lowerCased(response.headers) as OutgoingHttpHeaders,
      body: bodyOf(response),
    },
    config,
  );
  const { text, values } = store.commitStatement(inner, stored, config.retentionMs);
  // From here on the transaction may commit the record: a failure is checked against the store.
  state.committing = true;
  const result = await client.query(text, values);
  if (result.rows.length !== 1) {
    throw new HttpError(409, "A request with this Idempotency-Key is still being processed", {
      code: IDEMPOTENCY_ERROR_CODES.inFlight,
      headers: { "Retry-After": config.retryAfter },
      cause: new ClaimLostError(inner.key),
    });
  }
  return true;
}

function lowerCased(headers: Readonly<Record<string, FieldValue>> | undefined): Record<string, FieldValue> {
  const out: Record<string, FieldValue> = {};
  for (const name of Object.keys(headers ?? {})) {
    const value = headers?.[name];
    if (value !== undefined) out[name.toLowerCase()] = value;
  }
  return out;
}

/** The bytes of `response` when it has them as bytes; undefined (kept without a body) otherwise. */
function bodyOf(response: CommittedResponse): Uint8Array | undefined {
  const kind = (response as Partial<Reply>).kind;
  if (kind === "empty") return new Uint8Array();
  if (kind === "data") return undefined;
  const body = response.body;
  if (body === undefined) return kind === undefined ? new Uint8Array() : undefined;
  if (typeof body === "string") return utf8Bytes(body);
  return body instanceof Uint8Array ? body : undefined;
}
