import {
  DurableObjectShell,
  type DurableObjectStateLike,
  type DurableObjectStorageLike,
} from "@svc/kernel/internal";
import { ALGORITHMS, type Algorithm, type RateLimitPolicy } from "@svc/ratelimit";
import { decideKey, type KeyState, refundKey } from "./key-state.js";

/** What {@link DurableObjectStore} sends its object: one operation on the object's one key. */
export type RateLimitObjectCall =
  | { readonly op: "consume"; readonly policy: RateLimitPolicy; readonly cost: number }
  | { readonly op: "refund"; readonly policy: RateLimitPolicy; readonly cost: number; readonly at: number }
  | { readonly op: "reset" };

/** The key's state as stored, with the instant it stops mattering. */
interface Stored extends KeyState {
  readonly expiresAt: number;
}

const STATE = "state";

const positive = (n: unknown): n is number => typeof n === "number" && Number.isFinite(n) && n > 0;

function isPolicy(value: unknown): value is RateLimitPolicy {
  const p = value as Partial<RateLimitPolicy> | null;
  return (
    typeof p === "object" &&
    p !== null &&
    ALGORITHMS.includes(p.algorithm as Algorithm) &&
    positive(p.limit) &&
    positive(p.windowMs) &&
    positive(p.burst)
  );
}

/** The call in `body`, or undefined when it is not one. */
function callOf(body: unknown): RateLimitObjectCall | undefined {
  const call = body as { op?: unknown; policy?: unknown; cost?: unknown; at?: unknown } | null;
  if (typeof call !== "object" || call === null) return undefined;
  if (call.op === "reset") return { op: "reset" };
  if (!isPolicy(call.policy) || !Number.isSafeInteger(call.cost) || (call.cost as number) < 0)
    return undefined;
  if (call.op === "consume") return { op: "consume", policy: call.policy, cost: call.cost as number };
  if (call.op === "refund" && typeof call.at === "number" && Number.isFinite(call.at))
    return { op: "refund", policy: call.policy, cost: call.cost as number, at: call.at };
  return undefined;
}

/**
 * The Durable Object behind {@link DurableObjectStore}: one object per limiter key, holding that
 * key's state (`{ t, c, p }`, as the Redis script keeps it) and deciding on it.
 *
 * Exact as the Redis script is atomic: the state is read once, when the object starts
 * (`blockConcurrencyWhile`, so no request is delivered before it), and each decision is then
 * computed and applied to it synchronously, with no `await` between reading the count and
 * writing it back, so no two decisions on a key interleave. The write is awaited before the
 * answer leaves (the output gate would hold it anyway): a decision is answered only once it is
 * durable, and a failed write fails the decision (`failMode`) rather than answering from a count
 * that was not kept. Time is the object's clock, one clock per key.
 *
 * The state expires as the Redis key does: an alarm at the end of its window deletes the
 * object's storage, so an idle key costs nothing.
 *
 * Export it from the Worker's main module under the `class_name` its binding names:
 *
 * @example
 * export { RateLimitObject } from "@svc/ratelimit/durable-object";
 * @see https://developers.cloudflare.com/durable-objects/api/state/#blockconcurrencywhile
 * @see https://blog.cloudflare.com/durable-objects-easy-fast-correct-choose-three/
 * @see https://developers.cloudflare.com/durable-objects/api/alarms/
 */
export class RateLimitObject {
  readonly #storage: DurableObjectStorageLike;
  /** The alarm as last set or read; `null` when none is set. */
  #alarm: number | null = null;
  readonly #shell: DurableObjectShell<RateLimitObjectCall, Stored>;

  constructor(ctx: DurableObjectStateLike, _env?: unknown) {
    this.#storage = ctx.storage;
    this.#shell = new DurableObjectShell(ctx, {
      read: () => this.#load(),
      callOf,
      refusal: "not a rate limit call",
      expiresAt: (state) => state.expiresAt,
    });
  }

  /** One {@link RateLimitObjectCall} as a JSON `POST`; its answer as JSON (400 for anything else). */
  async fetch(request: Request): Promise<Response> {
    const call = await this.#shell.receive(request);
    if (call instanceof Response) return call;
    const now = Date.now();
    const live = this.#shell.live(now);
    if (call.op === "reset") {
      await this.#keep(undefined, now);
      return Response.json({ ok: true });
    }
    if (call.op === "refund") {
      const back = refundKey(live, call.policy, call.cost, call.at);
      if (back !== live && live !== undefined && back !== undefined)
        await this.#keep({ ...back, expiresAt: live.expiresAt }, now);
      return Response.json({ ok: true });
    }
    const { decision, state, expiresAt } = decideKey(live, call.policy, call.cost, now);
    await this.#keep(state === undefined ? undefined : { ...state, expiresAt }, now);
    return Response.json(decision);
  }

  /** The alarm: the state has expired (delete it all) or was extended since (wait for its end). */
  async alarm(): Promise<void> {
    this.#alarm = await this.#shell.alarm();
  }

  /**
   * Makes `state` the key's state, then writes it (or deletes everything when there is none) and
   * sets the alarm that deletes it once it has expired. One alarm at a time: a later expiry is
   * found by the alarm itself.
   */
  #keep(state: Stored | undefined, now: number): Promise<void> {
    return this.#shell.keep(
      state,
      async (kept) => {
        const put = this.#storage.put(STATE, kept);
        if (this.#alarm === null || this.#alarm < now) {
          this.#alarm = kept.expiresAt;
          await Promise.all([put, this.#storage.setAlarm(kept.expiresAt)]);
        } else await put;
      },
      async () => {
        // Whether deleteAll took the alarm with it depends on the compatibility date.
        this.#alarm = await this.#storage.getAlarm();
      },
    );
  }

  /** Reads the state and the alarm from storage. */
  async #load(): Promise<Stored | undefined> {
    const state = await this.#storage.get<Stored>(STATE);
    this.#alarm = await this.#storage.getAlarm();
    return state;
  }
}
