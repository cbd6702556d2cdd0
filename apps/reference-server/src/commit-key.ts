import { HttpError } from "@svc/errors";
import {
  IDEMPOTENCY_ERROR_CODES,
  type IdempotencyLocals,
  type IdempotencyStore,
  PostgresStore,
  type StoredResponse,
} from "@svc/idempotency";
import type { Request } from "express";
import { CompiledQuery, type Transaction } from "kysely";
import type { Database } from "./db/schema.js";

/**
 * Records the request's Idempotency-Key outcome inside the transaction that writes its effect, so
 * the two commit together (see @svc/idempotency's `PostgresStore.commit`). A request without a key
 * records nothing.
 */
export type CommitKey = (trx: Transaction<Database>, req: Request, response: StoredResponse) => Promise<void>;

/**
 * The {@link CommitKey} of a store that commits with the write (PostgreSQL), else `undefined`: the
 * record is then stored after the response, as by the memory and Redis stores. A claim another
 * execution took over (its lease ran out) rolls the transaction back: a 409 with `Retry-After`.
 */
export function keyCommitter(store: IdempotencyStore): CommitKey | undefined {
  if (!(store instanceof PostgresStore)) return undefined;
  return async (trx, req, response) => {
    const claim = req.res?.locals.idempotency as IdempotencyLocals | undefined;
    if (claim === undefined) return;
    const { text, values } = store.commitStatement(claim, response);
    const result = await trx.executeQuery(CompiledQuery.raw(text, values));
    if (result.rows.length !== 1) {
      throw new HttpError(409, "A request with this Idempotency-Key is still being processed", {
        code: IDEMPOTENCY_ERROR_CODES.inFlight,
        headers: { "Retry-After": "1" },
      });
    }
  };
}
