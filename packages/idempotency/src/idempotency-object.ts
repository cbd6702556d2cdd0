import {
  type DurableObjectBatchStateLike,
  type DurableObjectBatchStorageLike,
  DurableObjectShell,
} from "@svc/kernel/internal";

/**
 * Characters of a stored record per storage value. A key-value backed object keeps at most
 * 128 KiB a value, and a string of characters past Latin-1 takes two bytes each in it: 32 Ki
 * characters stay within it on both backends.
 * @see https://developers.cloudflare.com/durable-objects/platform/limits/
 */
export const RECORD_CHUNK_CHARS = 32_768;

/** Most values one record spans: with its head, within the 128 entries one `put` writes at once. */
export const MAX_RECORD_CHUNKS = 64;

/** What {@link DurableObjectStore} sends its object: one operation on the object's one record. */
export type IdempotencyObjectCall =
  | { readonly op: "claim"; readonly fingerprint: string; readonly leaseMs: number; readonly token: string }
  | { readonly op: "complete"; readonly token: string; readonly record: string; readonly retentionMs: number }
  | { readonly op: "release"; readonly token: string }
  | { readonly op: "renew"; readonly token: string; readonly leaseMs: number };

/** The object's answer to a claim (`record` being the stored response's JSON). */
export type IdempotencyObjectClaim =
  | { readonly outcome: "claimed"; readonly token: string }
  | { readonly outcome: "in-flight"; readonly fingerprint: string; readonly leaseRemainingMs: number }
  | { readonly outcome: "completed"; readonly fingerprint: string; readonly record: string };

/** The record's head, stored under `record`; a completed record's response follows in `r0`, `r1`, …. */
interface Head {
  readonly state: "in-flight" | "completed";
  readonly fingerprint: string;
  readonly token: string;
  readonly expiresAt: number;
  readonly chunks: number;
}

interface Held {
  head: Head;
  /** The completed record's response, as stored. */
  record: string;
}

const HEAD = "record";
const chunkKey = (i: number) => `r${i}`;

const text = (v: unknown): v is string => typeof v === "string";
const duration = (v: unknown): v is number => typeof v === "number" && Number.isFinite(v) && v > 0;

/** The call in `body`, or undefined when it is not one. */
function callOf(body: unknown): IdempotencyObjectCall | undefined {
  const c = body as Record<string, unknown> | null;
  if (typeof c !== "object" || c === null || !text(c.token)) return undefined;
  if (c.op === "claim" && text(c.fingerprint) && duration(c.leaseMs))
    return { op: "claim", fingerprint: c.fingerprint, leaseMs: c.leaseMs, token: c.token };
  if (
    c.op === "complete" &&
    text(c.record) &&
    c.record.length <= RECORD_CHUNK_CHARS * MAX_RECORD_CHUNKS &&
    duration(c.retentionMs)
  )
    return { op: "complete", token: c.token, record: c.record, retentionMs: c.retentionMs };
  if (c.op === "release") return { op: "release", token: c.token };
  if (c.op === "renew" && duration(c.leaseMs)) return { op: "renew", token: c.token, leaseMs: c.leaseMs };
  return undefined;
}

/**
 * The Durable Object behind {@link DurableObjectStore}: one object per scoped idempotency key,
 * holding that key's one record (in flight with its fencing token, or completed with the response
 * to replay), with the steps of the Redis store's scripts: a claim that returns a live record or
 * writes an in-flight one, and a complete, release or renew that acts only while the caller's
 * token is the record's.
 *
 * Each step is atomic as a script is: the record is read once, when the object starts
 * (`blockConcurrencyWhile`), and each step then decides and updates it synchronously, with no
 * `await` between, so two duplicates can never both claim. The write is awaited before the answer,
 * so an answered claim is durable. Time is the object's clock. An alarm at the record's expiry (the
 * lease's end, then the retention's) deletes its storage, as the Redis key's `PEXPIRE` does.
 *
 * Export it from the Worker's main module under the `class_name` its binding names:
 *
 * @example
 * export { IdempotencyObject } from "@svc/idempotency/durable-object";
 * @see https://developers.cloudflare.com/durable-objects/api/state/#blockconcurrencywhile
 * @see https://blog.cloudflare.com/durable-objects-easy-fast-correct-choose-three/
 * @see https://datatracker.ietf.org/doc/html/draft-ietf-httpapi-idempotency-key-header#section-2.6
 */
export class IdempotencyObject {
  readonly #storage: DurableObjectBatchStorageLike;
  readonly #shell: DurableObjectShell<IdempotencyObjectCall, Held>;

  constructor(ctx: DurableObjectBatchStateLike, _env?: unknown) {
    this.#storage = ctx.storage;
    this.#shell = new DurableObjectShell(ctx, {
      read: () => this.#load(),
      callOf,
      refusal: "not an idempotency call",
      expiresAt: (held) => held.head.expiresAt,
    });
  }

  /** One {@link IdempotencyObjectCall} as a JSON `POST`; its answer as JSON (400 for anything else). */
  async fetch(request: Request): Promise<Response> {
    const call = await this.#shell.receive(request);
    if (call instanceof Response) return call;
    const now = Date.now();
    const live = this.#shell.live(now);
    if (call.op === "claim") {
      if (live?.head.state === "completed")
        return Response.json({
          outcome: "completed",
          fingerprint: live.head.fingerprint,
          record: live.record,
        });
      if (live !== undefined)
        return Response.json({
          outcome: "in-flight",
          fingerprint: live.head.fingerprint,
          leaseRemainingMs: live.head.expiresAt - now,
        });
      const head: Head = {
        state: "in-flight",
        fingerprint: call.fingerprint,
        token: call.token,
        expiresAt: now + call.leaseMs,
        chunks: 0,
      };
      await this.#keep({ head, record: "" }, this.#shell.held);
      return Response.json({ outcome: "claimed", token: call.token });
    }
    // complete, release and renew act only on the caller's own in-flight record (fencing).
    if (live?.head.state !== "in-flight" || live.head.token !== call.token) return Response.json(false);
    if (call.op === "release") await this.#keep(undefined, true);
    else if (call.op === "renew")
      await this.#keep({ ...live, head: { ...live.head, expiresAt: now + call.leaseMs } }, false);
    else {
      const chunks = Math.ceil(call.record.length / RECORD_CHUNK_CHARS);
      const head: Head = { ...live.head, state: "completed", expiresAt: now + call.retentionMs, chunks };
      await this.#keep({ head, record: call.record }, false);
    }
    return Response.json(true);
  }

  /** The alarm: the record has expired (delete it all) or lives on (wait for its end). */
  async alarm(): Promise<void> {
    await this.#shell.alarm();
  }

  /**
   * Makes `held` the record, then writes it (head and response chunks in one `put`, so a replay
   * never reads half a record) and sets the alarm for its expiry; no record deletes everything.
   * `replace`: an earlier record's values go first.
   */
  #keep(held: Held | undefined, replace: boolean): Promise<void> {
    return this.#shell.keep(held, async ({ head, record }) => {
      const entries: Record<string, unknown> = { [HEAD]: head };
      for (let i = 0; i < head.chunks; i++)
        entries[chunkKey(i)] = record.slice(i * RECORD_CHUNK_CHARS, (i + 1) * RECORD_CHUNK_CHARS);
      if (replace) await this.#storage.deleteAll();
      await Promise.all([this.#storage.put(entries), this.#storage.setAlarm(head.expiresAt)]);
    });
  }

  /** Reads the record from storage: its head, then its response's chunks. */
  async #load(): Promise<Held | undefined> {
    const head = await this.#storage.get<Head>(HEAD);
    if (head === undefined) return undefined;
    const keys = Array.from({ length: head.chunks }, (_, i) => chunkKey(i));
    const values = keys.length === 0 ? new Map<string, string>() : await this.#storage.get<string>(keys);
    return { head, record: keys.map((key) => values.get(key) ?? "").join("") };
  }
}
