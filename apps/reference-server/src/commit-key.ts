import { type CommittedResponse, commitKey } from "@svc/idempotency";
import { type Claim, type Reply, reply } from "@svc/kernel";
import { CompiledQuery, type Kysely } from "kysely";
import type { Database } from "./db/schema.js";

/**
 * Records the request's Idempotency-Key outcome inside `trx`, the transaction that writes its
 * effect, so the two commit together (see @svc/idempotency's `commitKey`): a retry replays
 * `response` whatever fails after the commit, and the effect never happens twice. Records nothing
 * for a request without a key (`claim` undefined) or when the records are not PostgreSQL's (they
 * are then stored after the response, by the memory or Redis store). A claim another execution
 * took over (its lease ran out) rejects with a 409 with `Retry-After`, rolling `trx` back.
 */
export function commitKeyIn(
  trx: Kysely<Database>,
  claim: Claim | undefined,
  response: CommittedResponse,
): Promise<boolean> {
  return commitKey(
    claim,
    { query: (text, values) => trx.executeQuery(CompiledQuery.raw(text, values ? [...values] : [])) },
    response,
  );
}

/**
 * The outcome a write commits with its key: its status and `Location` (the new resource's
 * representation is one GET away). A retry meets it only when the response the pipeline makes
 * after the commit is never recorded (a failure after the commit, a crash); otherwise that
 * response, of the same status, replaces it.
 */
export function writtenAt(status: number, location: string): Reply {
  return reply(undefined, { status, headers: { Location: location } });
}
