import type {
  Body,
  Claim,
  Fields,
  FieldValue,
  Idempotency,
  PipelineRequest,
  Replay,
  ResponseValue,
} from "@svc/kernel";
import { addVary, exchangeIfAny } from "@svc/kernel";
import { concatBytes, utf8Bytes } from "@svc/kernel/internal";
import {
  type IdempotencyConfig,
  type IdempotencyCoreOptions,
  NEVER_REPLAYED,
  resolveConfig,
} from "./config.js";
import { coreOf, type IdempotencyClaim, type IdempotencyCore, type IdempotencyResponse } from "./core.js";
import { principalScope } from "./principal-scope.js";
import type { IdempotencyRequest, IdempotencyRequestReader } from "./request-reader.js";
import type { StoredResponse } from "./store.js";

/**
 * Options of {@link idempotency}: those of the core (`createIdempotency`), over the request the
 * adapter hands the pipeline (`PipelineRequest.native`: the Express request; the framework's own
 * request with the entry of another framework). `scope` defaults to the id of the principal
 * `@svc/auth` recorded for the request, else `"anonymous"`; `routing` to the framework's router's
 * rules, as its adapter recorded them (Express's `case sensitive routing` and `strict routing`).
 *
 * @example idempotency({ store, required: true, leaseMs: 30_000, documentationUrl: "https://api.example/docs/idempotency" })
 * @see https://datatracker.ietf.org/doc/html/draft-ietf-httpapi-idempotency-key-header
 */
export interface IdempotencyOptions<Req = IdempotencyRequest> extends IdempotencyCoreOptions<Req> {}

/**
 * A key this execution claimed: what the handler finds in `context.claim` (typed as the kernel's
 * `Claim`; {@link commitKey} takes it as it is).
 */
export interface IdempotencyKeyClaim extends Claim {
  /** The scoped key the record is stored under. */
  readonly key: string;
  /** The fencing token of this execution; pass it on to guard downstream writes. */
  readonly token: string;
  /**
   * The endpoint starts its work now: a 4xx it answers after this is stored and replayed; one
   * answered before (a validation failure) is not, so a retry with a corrected body runs.
   * Stripe's rule: "results are only saved if an API endpoint started executing".
   */
  markStarted(): void;
  /** Records the pipeline's response (before content coding) for retries to replay. */
  complete(value: ResponseValue): Promise<void>;
  /**
   * The handler failed (it threw, or the pipeline refused its result): the key is freed for a
   * retry, unless its outcome committed with the handler's effect ({@link commitKey}), whose
   * recorded response then answers.
   */
  release(error: unknown): Promise<Replay | undefined>;
}

/** The pipeline step {@link idempotency} returns. */
export interface IdempotencyStep extends Idempotency {
  begin(request: PipelineRequest): Promise<Replay | IdempotencyKeyClaim | undefined>;
}

/** Internal state of a claim that {@link commitKey} needs. */
export interface ClaimState {
  readonly config: IdempotencyConfig<IdempotencyRequest>;
  /** Set when the handler ran the commit statement in its transaction. */
  committing: boolean;
}

const STATE = new WeakMap<object, ClaimState>();

/** The step's state of a claim handed to a handler; undefined for any other object. */
export function claimState(claim: unknown): (ClaimState & { inner: IdempotencyClaim }) | undefined {
  return typeof claim === "object" && claim !== null
    ? (STATE.get(claim) as (ClaimState & { inner: IdempotencyClaim }) | undefined)
    : undefined;
}

/**
 * The `Idempotency-Key` step of a response pipeline (draft-ietf-httpapi-idempotency-key-header):
 * `svc.handle(handler, { idempotency: step })`. The first request with a key claims it atomically
 * and runs; the pipeline's response (status, safe fields, identity bytes) is recorded; a retry
 * with the same key and payload gets that response again with `Idempotent-Replayed: true`, coded
 * for its own `Accept-Encoding` by the pipeline. A duplicate while the first still runs gets 409
 * with `Retry-After`; the same key with another payload 422; a malformed key (or none, when
 * `required`) 400. Keys are scoped by principal, method and the route the router runs. The key is
 * released only when the handler fails (it throws, or the pipeline refuses its result), never for
 * a connection's fate: a response the client did not read is still recorded.
 *
 * `reader` reads the framework's request (`PipelineRequest.native`): each framework's entry
 * (`@svc/idempotency/express`, `/node`, `/fastify`, `/fetch`) exports `idempotency(options)` with
 * its own; an adapter of another framework gives one of its own.
 *
 * @example
 * const keys = idempotency({ store, required: true }, myRouterReader);
 * @see https://datatracker.ietf.org/doc/html/draft-ietf-httpapi-idempotency-key-header
 */
export function idempotency<Req = IdempotencyRequest>(
  options: IdempotencyOptions<Req> = {},
  reader: IdempotencyRequestReader<Req>,
): IdempotencyStep {
  // The request type only types the callbacks; the step hands them what the adapter gave it.
  const config = resolveConfig<IdempotencyRequest>(
    options as IdempotencyCoreOptions<IdempotencyRequest>,
    principalScope,
  );
  const core = coreOf(config);
  const { routing } = config;
  return {
    async begin(request) {
      const method = request.view.method ?? "GET";
      if (!core.guards(method)) return undefined;
      const native = request.native as (IdempotencyRequest & Req) | undefined;
      const facts = reader.facts(native, routing);
      const gone = config.waitMs > 0 ? reader.gone(native) : undefined;
      const decision = await core
        .begin({
          method,
          target: facts.target ?? request.path,
          headers: request.view.headers,
          // The content a body parser in front recorded in the request's exchange.
          body: native === undefined ? undefined : exchangeIfAny(native)?.body?.value,
          route: facts.route,
          params: facts.params,
          routing: facts.routing,
          log: facts.log,
          request: native,
          signal: gone?.signal,
        })
        .finally(() => gone?.stop());
      if (decision.outcome === "pass") return undefined;
      if (decision.outcome === "error") throw decision.error;
      if (decision.outcome === "replay") return { replay: replayValue(decision.response) };
      return keyClaim(core, decision.claim, { config, committing: false }, request);
    },
  };
}

function keyClaim(
  core: IdempotencyCore<IdempotencyRequest>,
  inner: IdempotencyClaim,
  state: ClaimState,
  request: PipelineRequest,
): IdempotencyKeyClaim {
  let started = false;
  const { config } = state;
  const claim: IdempotencyKeyClaim = {
    key: inner.key,
    token: inner.token,
    markStarted() {
      started = true;
    },
    async complete(value) {
      let body: Uint8Array | undefined;
      try {
        body = await recordedBody(value, config.maxStoredBytes);
      } catch (err) {
        // The response's own stream failed: no response to record, the handler's failure.
        await withinWait(core.release(inner), RELEASE_WAIT_MS);
        throw err;
      }
      const response: IdempotencyResponse = {
        status: value.status,
        headers: headersOf(config.replayHeaders, value, request),
        body,
      };
      // A store that never answers holds the response one lease at most (the claim is over by then).
      await withinWait(core.complete(inner, response, started || state.committing), config.leaseMs);
    },
    async release() {
      if (state.committing && typeof config.store.recorded === "function") {
        // The handler ran the commit statement: its transaction may have committed the key's
        // outcome with its effect before it failed. Then that outcome answers, and the claim
        // stays; when the store cannot tell, it stays too (a retry after the lease finds the
        // committed record, or claims a key whose transaction rolled back).
        let recorded: StoredResponse | undefined;
        try {
          recorded = await config.store.recorded(inner.key, inner.token);
        } catch {
          core.abandon(inner);
          return undefined;
        }
        if (recorded !== undefined) {
          core.abandon(inner);
          return { replay: replayValue(recorded) };
        }
      }
      // A store that never answers must not hold the failure's answer: past the wait the release
      // may still land; a retry meanwhile gets 409, and the claim ends with its lease at the latest.
      await withinWait(core.release(inner), RELEASE_WAIT_MS);
      return undefined;
    },
  };
  STATE.set(claim, Object.assign(state, { inner }));
  return claim;
}

/** How long a failure's answer waits for the store to release the claim. */
const RELEASE_WAIT_MS = 1000;

/** `promise`, or at most `ms` of waiting for it (the timer keeps no process alive). */
function withinWait(promise: Promise<void>, ms: number): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, Math.min(ms, 2_147_483_647));
    timer.unref?.();
    void promise.finally(() => {
      clearTimeout(timer);
      resolve();
    });
  });
}

/**
 * The fields a record may keep (`replayHeaders`, and `Content-Encoding` of bytes a handler coded
 * itself): the response's own (a removed one, `null`, is not kept), else one set in front of the
 * pipeline; `Vary`, the response's.
 */
function headersOf(names: readonly string[], value: ResponseValue, request: PipelineRequest) {
  const headers: IdempotencyResponse["headers"] = {};
  for (const name of [...names, "content-encoding"]) {
    const own = name === "vary" ? value.vary.join(", ") || undefined : value.fields[name];
    const field = own === undefined ? request.preset?.(name) : own;
    if (field !== null && field !== undefined) headers[name] = field as string | string[];
  }
  return headers;
}

function isStream(body: Body): body is NodeJS.ReadableStream {
  return typeof (body as NodeJS.ReadableStream).pipe === "function";
}

/**
 * The identity bytes to record: the body itself; for a stream, read up to `max` bytes. A stream
 * that ends within them becomes those bytes (the response sends them whole); a longer one is sent
 * as it comes, the bytes read first, and recorded without its body.
 */
async function recordedBody(value: ResponseValue, max: number): Promise<Uint8Array | undefined> {
  const body = value.body;
  if (body === undefined) return new Uint8Array();
  if (!isStream(body)) return body;
  // A stream body with a `pipe` comes from Node.js code; a runtime without node:stream has none
  // to read it with, and sends it as it is, recorded without its body.
  const Readable = nodeReadable();
  if (Readable === undefined) return undefined;
  const stream = body instanceof Readable ? body : Readable.from(body as AsyncIterable<unknown>);
  const { chunks, ended } = await readUpTo(stream, max);
  if (ended) {
    const whole = concatBytes(chunks);
    value.body = whole;
    return whole;
  }
  value.body = Readable.from(rest(chunks, stream));
  return undefined;
}

type NodeReadable = typeof import("node:stream").Readable;

/**
 * node:stream's `Readable` where the runtime has it, through `process.getBuiltinModule`: an import
 * would keep the main entry, which the Fetch entry imports, from loading where there is no Node.js.
 *
 * @see https://nodejs.org/api/process.html#processgetbuiltinmoduleid
 */
function nodeReadable(): NodeReadable | undefined {
  const runtime = (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }).process;
  if (typeof runtime?.getBuiltinModule !== "function") return undefined;
  try {
    const stream = runtime.getBuiltinModule("node:stream") as { Readable?: NodeReadable } | undefined;
    return typeof stream?.Readable?.from === "function" ? stream.Readable : undefined;
  } catch {
    return undefined;
  }
}

async function* rest(read: Uint8Array[], stream: NodeJS.ReadableStream): AsyncGenerator<Uint8Array> {
  yield* read;
  for await (const chunk of stream) yield toBytes(chunk);
}

/** A chunk as bytes of its own (a string in UTF-8). */
function toBytes(chunk: unknown): Uint8Array {
  return typeof chunk === "string" ? utf8Bytes(chunk) : new Uint8Array(chunk as Uint8Array);
}

/** Reads `stream` until it ends or more than `max` bytes came; leaves it paused in the latter case. */
function readUpTo(
  stream: NodeJS.ReadableStream,
  max: number,
): Promise<{ chunks: Uint8Array[]; ended: boolean }> {
  return new Promise((resolve, reject) => {
    const chunks: Uint8Array[] = [];
    let size = 0;
    const done = () => {
      stream.removeListener("data", onData);
      stream.removeListener("end", onEnd);
      stream.removeListener("error", onError);
    };
    const onData = (chunk: unknown) => {
      const buf = toBytes(chunk);
      chunks.push(buf);
      size += buf.byteLength;
      if (size > max) {
        stream.pause();
        done();
        resolve({ chunks, ended: false });
      }
    };
    const onEnd = () => {
      done();
      resolve({ chunks, ended: true });
    };
    const onError = (err: unknown) => {
      done();
      reject(err);
    };
    stream.on("data", onData);
    stream.once("end", onEnd);
    stream.once("error", onError);
  });
}

/**
 * A record as the response to replay, with `Idempotent-Replayed: true` (and
 * `Idempotent-Body-Omitted: true` for a record kept without its body). Fields a replay never sends
 * (cookies, dates, framing) are left out whatever the record holds; a 204 gets no content
 * (RFC 9110 §6.4.1). The pipeline codes it for the retry's `Accept-Encoding`.
 *
 * @see https://datatracker.ietf.org/doc/html/draft-ietf-httpapi-idempotency-key-header#section-2.6
 */
export function replayValue(stored: StoredResponse): ResponseValue {
  const fields: Fields = {};
  const vary: string[] = [];
  for (const [name, value] of Object.entries(stored.headers)) {
    const lower = name.toLowerCase();
    if (NEVER_REPLAYED.test(lower)) continue;
    if (lower === "vary") {
      const names = [value].flat().join(",").split(",");
      addVary(vary, ...names.map((f) => f.trim()).filter(Boolean));
    } else fields[lower] = value as FieldValue;
  }
  fields["idempotent-replayed"] = "true";
  if (stored.bodyOmitted === true) fields["idempotent-body-omitted"] = "true";
  const bodyless = stored.status === 204 || stored.status === 304 || stored.status < 200;
  return { status: stored.status, fields, vary, body: bodyless ? undefined : stored.body };
}
