import { fallbackLogger, HttpError, type Logger } from "@svc/errors";
import { ipBucket, type RequestView, requestFacts } from "@svc/kernel";
import { valueFor } from "@svc/kernel/internal";
import type { BasicCredentials } from "./basic.js";
import { randomBytes } from "./bytes.js";
import { ConcurrencyGate, type Release } from "./concurrency-gate.js";
import { hmacSha256Base64url, sha256Base64url } from "./digest.js";
import {
  DEFAULT_FAILURE_KEYS,
  DEFAULT_FAILURE_LIMIT,
  DEFAULT_FAILURE_WINDOW_MS,
  type FailureLimiter,
  MemoryFailureBudget,
} from "./failure-budget.js";
import { checkOptions, optionError } from "./options.js";
import { type Principal, type PrincipalInit, toPrincipal } from "./principal.js";
import { principalBytes, VerifiedTokenCache } from "./token-cache.js";

/**
 * Checks a user name and password. Resolve to the principal for good credentials, and to
 * `null`/`undefined`/`false` for bad ones (a throw is a server failure, not a 401).
 * Compare passwords in constant time: {@link verifyPassword} does. Both arrive in Unicode NFC
 * (RFC 7617 §2.1, RFC 8265): look users up by their NFC name, and hash passwords in NFC
 * ({@link hashPassword} does).
 *
 * @example
 * const verify: VerifyPassword = async (user, password) =>
 *   (await passwords.verify(password, users.get(user)?.hash)) ? { id: user } : null;
 * @see https://www.rfc-editor.org/rfc/rfc7617
 */
export type VerifyPassword = (
  username: string,
  password: string,
) => Promise<PrincipalInit | null | undefined | false> | PrincipalInit | null | undefined | false;

/** The part of a `Logger` (from `@svc/errors`) this package calls; pino loggers fit. */
export type BasicLogger = Pick<Logger, "warn">;

/**
 * Failed-authentication budgets, checked before any password is hashed. Without `perClient` and
 * `perUsername`, both are an in-memory budget of 10 failures per 15 minutes per key (see
 * `failureLimit` in {@link BasicOptions}).
 *
 * @example
 * const failureLimit: FailureLimitOptions = { perClient: failures, perUsername: failures };
 * @see https://www.rfc-editor.org/rfc/rfc6585#section-4
 */
export interface FailureLimitOptions {
  /**
   * Budget of failures per client (key `c:<address>`, IPv6 per /64). Spent: every Basic attempt
   * from that client gets 429 with `Retry-After`, right password or not, until it replenishes.
   */
  perClient?: FailureLimiter;
  /**
   * Budgets of failures per user name, case-folded: the client's own for that name (key
   * `p:<SHA-256 of client and name>`: spent, that client's attempts for the name get 429), and the
   * name's from every client (key `u:<SHA-256 of the NFC, lower-cased name>`). The name's, which
   * anyone can spend, refuses (429) only a client that has failed for that name itself or has no
   * address: a client with a clean record for it keeps signing in through someone else's flood.
   * The same limiter object as `perClient` may serve both (the keys differ).
   */
  perUsername?: FailureLimiter;
  /**
   * The client's address (IPv6 grouped per /64), or any other key naming the client (longer than
   * 64 characters: its SHA-256 is used); `undefined` skips the client budget. The default is the
   * client `requestFacts` of `@svc/kernel` resolves behind the framework's trust (Express's
   * `trust proxy`, Fastify's `trustProxy`: the same address as `req.ip`); set that to exactly
   * your proxies, or every client shares their budget. On Fetch servers it is the address the
   * adapter was given (`@hono/node-server`'s, `withConnection`'s).
   * @default (req) => requestFacts(req).client
   */
  clientAddress?: (req: RequestView) => string | undefined;
  /**
   * When a limiter fails (Redis down): `"open"` goes on without the budgets (the concurrency
   * bound still holds) and logs at most once a minute; `"closed"` answers 503 with `Retry-After`.
   * @default "open"
   */
  failMode?: "open" | "closed";
  /**
   * Where `failMode: "open"` reports a limiter failure.
   * @default one JSON line on stderr
   */
  logger?: BasicLogger;
}

/**
 * The verified-credentials cache: a client that sends the same good credentials again within
 * `ttl` is not verified (nor hashed) again.
 *
 * @example
 * const cache: BasicCacheOptions = { max: 500, ttl: 30 };
 * @see https://www.rfc-editor.org/rfc/rfc7617#section-2
 */
export interface BasicCacheOptions {
  /**
   * Most entries held (least recently used leaves first); about 200 bytes each plus the principal,
   * and at most 8 MiB in all (estimated, the principal's strings at two bytes a character): a
   * `verify` returning a principal over 8 MiB on its own is called again on every request.
   * @default 1000
   */
  max?: number;
  /**
   * Seconds an entry is served. A changed password or a removed user keeps working for up to
   * this long with the old credentials (or call `clearCache()`).
   * @default 60
   */
  ttl?: number;
}

/**
 * Options of Basic authentication (RFC 7617), for `authenticate({ basic })` or
 * {@link createBasicVerifier}.
 *
 * @example
 * const basic: BasicOptions = { verify, failureLimit: { perClient: failures, perUsername: failures } };
 * @see https://www.rfc-editor.org/rfc/rfc7617
 */
export interface BasicOptions {
  /**
   * Checks the credentials; the same callback can serve SOAP `Authentication` headers. Basic
   * credentials reach it in Unicode NFC (`"cafe\u0301"` arrives as `"caf\u00e9"`).
   */
  verify: VerifyPassword;
  /**
   * Budgets of failed attempts per client and per user name, checked before `verify` runs.
   * Without `perClient` and `perUsername` (or without `failureLimit`), both count in memory in this
   * process: 10 failures per 15 minutes per key, a unit back every 90 s, at most 10,000 keys
   * (about 2.5 MiB; the least recently counted leave first). `false` turns the budgets off.
   * @default in-memory budgets of 10 failures per 15 minutes
   */
  failureLimit?: FailureLimitOptions | false;
  /**
   * Most `verify` calls (password hashing) running at once in this process. scrypt runs on
   * libuv's thread pool (4 threads unless `UV_THREADPOOL_SIZE` says otherwise), which Bearer
   * signature checks and file I/O share: keeping hashing below its size keeps them flowing.
   * @default 2
   */
  concurrency?: number;
  /**
   * Most attempts waiting for a `concurrency` slot; beyond it an attempt is shed with 503 and
   * `Retry-After` at once, without hashing.
   * @default 16
   */
  queue?: number;
  /**
   * `Retry-After` seconds on that 503 (and on a `failMode: "closed"` limiter failure).
   * @default 1
   */
  busyRetryAfter?: number;
  /**
   * The verified-credentials cache, or `false` to verify every request.
   * @default { max: 1000, ttl: 60 }
   */
  cache?: BasicCacheOptions | false;
}

/**
 * What {@link BasicVerifier.check} concluded.
 * - `authenticated`: good credentials.
 * - `invalid`: bad or undecodable credentials (counted against the budgets): 401.
 * - `blocked`: a failure budget is spent; nothing was verified: 429 with `retryAfterMs`.
 * - `busy`: too many verifications running and waiting, or a closed-mode limiter failure: 503.
 *
 * @example
 * const outcome = await verifier.check(decodeBasicCredentials(token), "192.0.2.1");
 * if (outcome.result === "blocked") res.setHeader("Retry-After", Math.ceil(outcome.retryAfterMs / 1000));
 * @see https://www.rfc-editor.org/rfc/rfc6585#section-4
 */
export type BasicOutcome =
  | { result: "authenticated"; principal: Principal }
  | { result: "invalid" }
  | { result: "blocked"; retryAfterMs: number }
  | { result: "busy"; retryAfterMs: number; cause?: unknown };

/**
 * A Basic verifier built once (budgets, concurrency bound and cache shared by every
 * `authenticate()` it is given to). Framework-agnostic: `check` takes decoded credentials and
 * the client's address.
 *
 * @example
 * const outcome = await verifier.check({ username: "alice", password: "s3cret" }, req.socket.remoteAddress);
 * @see https://www.rfc-editor.org/rfc/rfc7617
 */
export interface BasicVerifier {
  /** Checks credentials (`undefined`: undecodable) from the client at `address`. */
  check(credentials: BasicCredentials | undefined, address: string | undefined): Promise<BasicOutcome>;
  /** The client address of a request, as `failureLimit.clientAddress` reads it. */
  clientAddress(req: RequestView): string | undefined;
  /** Forgets every verified credential (after a password change, for instance). */
  clearCache(): void;
  /** The verification slots: `limit` and `queue`, `active` and `waiting` now. */
  readonly gate: {
    readonly limit: number;
    readonly queue: number;
    readonly active: number;
    readonly waiting: number;
  };
}

/**
 * The HTTP error of an attempt the verifier did not judge (package-internal): a spent failure
 * budget is a 429, saturated hashing a 503, both with `Retry-After`. Basic (`authenticate`) and
 * SOAP header credentials answer them the same way.
 */
export function notJudged(outcome: Extract<BasicOutcome, { retryAfterMs: number }>): HttpError {
  const retryAfter = Math.max(1, Math.ceil(outcome.retryAfterMs / 1000));
  if (outcome.result === "blocked") {
    // RFC 6585 §4: too many failed attempts; nothing was verified, whatever the password.
    return HttpError.tooManyRequests(retryAfter, "Too many failed authentication attempts", {
      code: "too_many_failed_attempts",
    });
  }
  // RFC 9110 §15.6.4: overloaded for now; the credentials were not judged.
  return HttpError.serviceUnavailable(retryAfter, "Credentials cannot be verified right now", {
    code: "authentication_busy",
    cause: outcome.cause,
  });
}

/**
 * One credential check run through a verifier's steps (package-internal, see {@link ATTEMPT}):
 * SOAP header credentials use it so they share the budgets, slots and cache of Basic.
 */
export interface CredentialCheck {
  /** The user name whose failure budget the attempt counts against. */
  username: string;
  /** The check itself: the principal for good credentials, falsy for bad ones. */
  run: () => ReturnType<VerifyPassword>;
  /** Identifies the credentials in the verified-credentials cache; absent: never cached. */
  cacheMaterial?: string;
  /** Whether `run` is expensive (password hashing) and takes a concurrency slot. */
  gated: boolean;
}

/**
 * Package-internal key of a verifier's step runner, `(check | undefined, address) => outcome`:
 * the budgets, the cache, the slots and the failure count of `check`, around any credential check
 * (`undefined`: unreadable credentials, counted as a failure). Not exported from the package.
 */
export const ATTEMPT = Symbol("@svc/auth credential attempt");

/** The step runner of a verifier made by {@link createBasicVerifier}. */
export function attemptOf(
  verifier: BasicVerifier,
): (check: CredentialCheck | undefined, address: string | undefined) => Promise<BasicOutcome> {
  return (verifier as BasicVerifier & { [ATTEMPT]: ReturnType<typeof attemptOf> })[ATTEMPT];
}

/** Marks objects made by {@link createBasicVerifier}. */
const VERIFIER = Symbol("@svc/auth basic verifier");

/** Whether `value` is a verifier made by {@link createBasicVerifier}. */
export function isBasicVerifier(value: unknown): value is BasicVerifier {
  return typeof value === "object" && value !== null && VERIFIER in value;
}

const defaultAddress = (req: RequestView) => requestFacts(req).client || undefined;

function isLimiter(value: unknown): value is FailureLimiter {
  return (
    typeof value === "object" && value !== null && typeof (value as FailureLimiter).consume === "function"
  );
}

function positiveInteger(value: unknown, name: string, fallback: number, min = 1): number {
  if (value === undefined) return fallback;
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < min)
    throw optionError(name, value, min === 0 ? "a non-negative integer" : "a positive integer");
  return value;
}

/**
 * Builds a Basic verifier: the failure budgets, the bounded hashing and the verified-credentials
 * cache around `verify`. Order per attempt, so a client over its budget costs no hashing and a
 * stranger's failures cannot lock a user out:
 *
 * 1. the failure budgets (`consume(key, 0)`): the client's, the client's for the user name, and
 *    the name's from every client when the client has failed for that name: spent → `blocked`;
 * 2. the cache of verified credentials: a hit → `authenticated`;
 * 3. a unit left of each budget that no attempt in flight holds (else wait for one of them to
 *    end, and check again from 1.), then a verification slot (`concurrency`, `queue`; a client
 *    with no failure goes ahead of those with some): none → `busy`;
 * 4. `verify(username, password)`; a failure spends one unit of each budget → `invalid`.
 *
 * Misconfiguration throws a `TypeError` with a `code` (`ERR_SVC_AUTH_BASIC_CONCURRENCY`, ...).
 *
 * @example
 * import { createRateLimiter, RedisStore } from "@svc/ratelimit";
 * const failures = createRateLimiter({ limit: 10, windowMs: 15 * 60_000, store: new RedisStore({ client }), prefix: "authfail:" });
 * const basic = createBasicVerifier({ verify, failureLimit: { perClient: failures, perUsername: failures } });
 * app.use(authenticate({ realm: "api", basic }));
 * app.post("/token", authenticate({ realm: "api", basic }), issueToken); // the same budgets and slots
 * @see https://www.rfc-editor.org/rfc/rfc7617
 * @see https://www.rfc-editor.org/rfc/rfc6585#section-4
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-15.6.4
 */
export function createBasicVerifier(options: BasicOptions): BasicVerifier {
  const config = resolveBasicConfig(options);
  const { clientAddress, cache } = config;
  return {
    [VERIFIER]: true,
    [ATTEMPT]: (credential: CredentialCheck | undefined, address: string | undefined) =>
      attempt(config, credential, address),
    check: (credentials, address) => checkCredentials(config, credentials, address),
    clientAddress: (req) => clientAddress(req),
    clearCache: () => cache?.clear(),
    gate: config.gate,
  } as BasicVerifier;
}

/** The options of {@link createBasicVerifier}, checked and resolved once, and the state its attempts share. */
interface BasicConfig {
  verify: VerifyPassword;
  perClient: FailureLimiter | undefined;
  perUsername: FailureLimiter | undefined;
  clientAddress: (req: RequestView) => string | undefined;
  failMode: "open" | "closed";
  logger: BasicLogger;
  /** `busyRetryAfter` in milliseconds: the wait of a `busy` outcome. */
  busyMs: number;
  /** The verification slots (`concurrency`, `queue`). */
  gate: ConcurrencyGate;
  /** The verified-credentials cache; undefined with `cache: false`. */
  cache: VerifiedTokenCache<Principal> | undefined;
  cacheTtlMs: number;
  /**
   * The cache is keyed by an HMAC under this key of the process: a heap dump holds no password,
   * and no digest that could be checked offline against guesses.
   */
  cacheSecret: Uint8Array;
  /** When `failMode: "open"` last logged a limiter failure (at most once a minute). */
  lastLog: number;
}

const BASIC_OPTIONS = Object.keys({
  verify: 0,
  failureLimit: 0,
  concurrency: 0,
  queue: 0,
  busyRetryAfter: 0,
  cache: 0,
} satisfies Record<keyof BasicOptions, 0>);

const FAILURE_LIMIT_OPTIONS = Object.keys({
  perClient: 0,
  perUsername: 0,
  clientAddress: 0,
  failMode: 0,
  logger: 0,
} satisfies Record<keyof FailureLimitOptions, 0>);

const BASIC_CACHE_OPTIONS = Object.keys({ max: 0, ttl: 0 } satisfies Record<keyof BasicCacheOptions, 0>);

function resolveBasicConfig(options: BasicOptions): BasicConfig {
  checkOptions(options, BASIC_OPTIONS, "basic", "an object { verify, ... }");
  const verify = options.verify;
  if (typeof verify !== "function")
    throw optionError("basic.verify", verify, "a function (username, password) => principal");
  const concurrency = positiveInteger(options.concurrency, "basic.concurrency", 2);
  const queue = positiveInteger(options.queue, "basic.queue", 16, 0);
  const busyRetryAfter = options.busyRetryAfter ?? 1;
  if (typeof busyRetryAfter !== "number" || !Number.isFinite(busyRetryAfter) || busyRetryAfter < 0)
    throw optionError("basic.busyRetryAfter", busyRetryAfter, "a non-negative number of seconds");
  return {
    verify,
    ...resolveFailureLimit(options.failureLimit),
    busyMs: busyRetryAfter * 1000,
    gate: new ConcurrencyGate(concurrency, queue),
    ...resolveCache(options.cache),
    cacheSecret: randomBytes(32),
    lastLog: Number.NEGATIVE_INFINITY,
  };
}

type FailureLimitConfig = Pick<
  BasicConfig,
  "perClient" | "perUsername" | "clientAddress" | "failMode" | "logger"
>;

/**
 * `basic.failureLimit`: the two budgets, how the client is named, and what a limiter failure
 * does. Neither budget given: both are one in-memory {@link MemoryFailureBudget} of this verifier,
 * as unlimited guessing is not a default to ship (OWASP: "protect against automated attacks");
 * `false` is the explicit way to have none.
 */
function resolveFailureLimit(limits: FailureLimitOptions | false | undefined): FailureLimitConfig {
  if (limits === false)
    return {
      perClient: undefined,
      perUsername: undefined,
      clientAddress: defaultAddress,
      failMode: "open",
      logger: fallbackLogger,
    };
  if (limits !== undefined)
    checkOptions(
      limits,
      FAILURE_LIMIT_OPTIONS,
      "basic.failureLimit",
      "an object { perClient?, perUsername?, ... } or false",
    );
  let perClient = limits?.perClient;
  let perUsername = limits?.perUsername;
  if (perClient !== undefined && !isLimiter(perClient))
    throw optionError("basic.failureLimit.perClient", perClient, "a limiter with consume(key, cost)");
  if (perUsername !== undefined && !isLimiter(perUsername))
    throw optionError("basic.failureLimit.perUsername", perUsername, "a limiter with consume(key, cost)");
  if (perClient === undefined && perUsername === undefined) {
    perClient = perUsername = new MemoryFailureBudget(
      DEFAULT_FAILURE_LIMIT,
      DEFAULT_FAILURE_WINDOW_MS,
      DEFAULT_FAILURE_KEYS,
    );
  }
  const clientAddress = limits?.clientAddress ?? defaultAddress;
  if (typeof clientAddress !== "function")
    throw optionError("basic.failureLimit.clientAddress", clientAddress, "a function (req) => string");
  const failMode = limits?.failMode ?? "open";
  if (failMode !== "open" && failMode !== "closed")
    throw optionError("basic.failureLimit.failMode", failMode, '"open" or "closed"');
  const logger = limits?.logger ?? fallbackLogger;
  if (typeof logger?.warn !== "function")
    throw optionError("basic.failureLimit.logger", logger, "an object with warn(obj, msg)");
  return { perClient, perUsername, clientAddress, failMode, logger };
}

/** `basic.cache`: the verified-credentials cache, or none with `false`. */
function resolveCache(
  option: BasicCacheOptions | false | undefined,
): Pick<BasicConfig, "cache" | "cacheTtlMs"> {
  const cacheOptions = option === false ? undefined : (option ?? {});
  if (cacheOptions !== undefined)
    checkOptions(cacheOptions, BASIC_CACHE_OPTIONS, "basic.cache", "an object { max, ttl } or false");
  const cacheMax = positiveInteger(cacheOptions?.max, "basic.cache.max", 1000);
  const cacheTtl = cacheOptions?.ttl ?? 60;
  if (typeof cacheTtl !== "number" || !Number.isFinite(cacheTtl) || cacheTtl <= 0)
    throw optionError("basic.cache.ttl", cacheTtl, "a positive number of seconds");
  return {
    cache: cacheOptions ? new VerifiedTokenCache<Principal>(cacheMax, principalBytes) : undefined,
    cacheTtlMs: cacheTtl * 1000,
  };
}

/**
 * What a budget key counts: the client's failures (`c:`, whatever user name), the client's
 * failures for one user name (`p:`), or the user name's failures from every client (`u:`).
 */
type Role = "client" | "pair" | "name";

/** A failure budget, the key an attempt counts against in it, and what that key counts. */
interface BudgetKey {
  limiter: FailureLimiter;
  key: string;
  role: Role;
}

/** What this process knows of one budget key beyond the limiter's count. */
interface KeyState {
  /** Attempts past the budget check whose outcome is not recorded yet (`verify` running or queued). */
  held: number;
  /** Attempts between the start of their budget read and their decision to hold. */
  reading: number;
  /** Bumped each time a held attempt ends: a budget read begun before it may not show its failure. */
  version: number;
  /** Attempts waiting for a held one to end. */
  waiting: (() => void)[];
}

/**
 * Budget keys with attempts reading, holding or waiting, per limiter, in this process: bounded by
 * the attempts in progress, as a key leaves once none is. Per limiter, not per verifier, so that
 * verifiers sharing a limiter share it.
 */
const keyStates = new WeakMap<FailureLimiter, Map<string, KeyState>>();

function stateOf(limiter: FailureLimiter, key: string): KeyState {
  return valueFor(valueFor(keyStates, limiter, newKeyStates), key, newKeyState);
}

const newKeyStates = () => new Map<string, KeyState>();
const newKeyState = (): KeyState => ({ held: 0, reading: 0, version: 0, waiting: [] });

function forgetIfIdle(limiter: FailureLimiter, key: string, state: KeyState): void {
  if (state.held === 0 && state.reading === 0 && state.waiting.length === 0)
    keyStates.get(limiter)?.delete(key);
}

/** Marks an attempt shed for want of a verification slot. */
const SHED = Symbol("shed");

/** The run of {@link CredentialCheck} steps 1-4 (see {@link createBasicVerifier}). */
async function attempt(
  config: BasicConfig,
  credential: CredentialCheck | undefined,
  address: string | undefined,
): Promise<BasicOutcome> {
  const keys = budgetKeys(config, credential, address);
  for (;;) {
    const states = keys.map(({ limiter, key }) => stateOf(limiter, key));
    const versions = states.map((state) => state.version);
    for (const state of states) state.reading++;
    let decided: Decided;
    try {
      decided = await beforeVerify(config, keys, credential, states, versions);
    } finally {
      states.forEach((state, i) => {
        state.reading--;
        const { limiter, key } = keys[i] as BudgetKey;
        forgetIfIdle(limiter, key, state);
      });
    }
    if ("outcome" in decided) return decided.outcome;
    if ("again" in decided) {
      await decided.again;
      continue;
    }
    try {
      // 3. and 4. A slot for the expensive part (or shed the attempt now), then the check.
      const { cacheKey, prespent, clean } = decided;
      const generation = config.cache?.generation;
      const result = await runGated(config, credential as CredentialCheck, clean);
      if (result === SHED) return { result: "busy", retryAfterMs: config.busyMs };
      if (!result) return recordFailure(config, keys, prespent);
      // clearCache() while this check ran (a changed password): it judged the old state, so its
      // result answers this attempt only and is not cached.
      return authenticated(config, result, config.cache?.generation === generation ? cacheKey : undefined);
    } finally {
      decided.release();
    }
  }
}

/** What steps 1 and 2 decide: an outcome, a reason to check again, or a hold on the budgets. */
type Decided =
  | { outcome: BasicOutcome }
  | { again: Promise<void> }
  | {
      release: () => void;
      prespent: readonly boolean[];
      cacheKey: string | undefined;
      /** The client has no failure on record and nothing in flight: it queues ahead for a slot. */
      clean: boolean;
    };

/**
 * Steps 1 and 2, and the hold on the budgets.
 *
 * The budgets keep a stranger from locking a user out (OWASP: account lockout "can be abused to
 * lock out legitimate users"). The client's budget, and its own budget for the user name, refuse
 * that client. The name's budget from every client, which anyone can spend, refuses only a client
 * that has failed for that name itself (its `p:` record, or an attempt of its own in flight): a
 * client with a clean record for the name is verified, or answered from the cache, as usual, as a
 * device-cookie scheme lets a known device through a lockout. A flood for one name from many
 * clients thus gets one guess per new client once the name's budget is spent, and the right
 * password from anywhere else keeps working. Every refusal comes before the cache: a refused
 * attempt spends nothing, so one answered from the cache would test a guess for free.
 *
 * A budget is spent only when a failure is recorded, once `verify` answers: checked alone, N
 * attempts sent at once all found the same units left and all reached `verify`, N guesses for a
 * budget of fewer. So each attempt that goes on to `verify` holds one of the units left of every
 * budget that applies to it until it is judged; with every unit held, it waits for one of those in
 * flight to end and checks again (the budget spent by then, or the same credentials just cached),
 * and a check that a held attempt ended during is made again, as it may not show that attempt's
 * failure. Good credentials sent at once wait rather than fail.
 */
async function beforeVerify(
  config: BasicConfig,
  keys: BudgetKey[],
  credential: CredentialCheck | undefined,
  states: readonly KeyState[],
  versions: readonly number[],
): Promise<Decided> {
  // The budgets are read before any hashing: a client over budget costs a lookup, not scrypt.
  let budgets: readonly Budget[] | undefined;
  if (keys.length > 0) {
    const read = await readBudgets(config, keys);
    if (!Array.isArray(read)) return { outcome: read as BasicOutcome };
    budgets = read.length > 0 ? read : undefined;
  }
  // 1. The client's budget, and for a name the client's own budget for it, and the
  // name's from every client when the client has failed for it (or cannot be told apart: no
  // address). All before the cache: an attempt refused without being counted must not learn
  // whether its password was right, or a client over a budget could test guesses for free.
  const pair = keys.findIndex((k) => k.role === "pair");
  const failedBefore =
    budgets !== undefined && (pair === -1 || hasFailures(budgets[pair] as Budget, states[pair] as KeyState));
  const applies = keys.map((k) => k.role !== "name" || failedBefore);
  const wait = budgets === undefined ? 0 : waitOf(keys, budgets, (_, i) => applies[i] === true);
  if (wait > 0) return { outcome: { result: "blocked", retryAfterMs: wait } };
  const prespent = budgets?.map((budget) => budget.wait === -1) ?? NONE_PRESPENT;
  if (!credential) return { outcome: await recordFailure(config, keys, prespent) };

  // 2. Credentials verified a moment ago.
  const cacheKey = cacheKeyOf(config, credential);
  if (cacheKey !== undefined) {
    const hit = config.cache?.get(cacheKey, Date.now());
    if (hit)
      return { outcome: { result: "authenticated", principal: toPrincipal(hit, "basic", hit.issuer) } };
  }

  // No budgets, or limiters that failed open: nothing counted, nothing to hold.
  if (budgets === undefined) return { release: () => {}, prespent, cacheKey, clean: false };
  const known = budgets;
  const guarding = (i: number) => applies[i] === true && !prespent[i]; // a unit spent in advance is this attempt's
  const clean =
    keys.some((k) => k.role !== "name") &&
    keys.every((k, i) => k.role === "name" || isClean(known[i] as Budget, states[i] as KeyState));
  const stale = states.some((state, i) => guarding(i) && state.version !== versions[i]);
  const full = states.find((state, i) => guarding(i) && state.held >= (known[i]?.remaining ?? 1));
  if (stale || full) {
    // A unit spent in advance by this check would be spent again by the next one.
    if (prespent.includes(true)) return { outcome: { result: "busy", retryAfterMs: config.busyMs } };
    if (stale || full === undefined) return { again: Promise.resolve() };
    return { again: new Promise<void>((resolve) => full.waiting.push(resolve)) };
  }
  const held = states.filter((_, i) => guarding(i));
  for (const state of held) state.held++;
  let released = false;
  return {
    prespent,
    cacheKey,
    clean,
    release: () => {
      if (released) return;
      released = true;
      states.forEach((state, i) => {
        if (!guarding(i)) return;
        state.held--;
        state.version++;
        // Every waiter checks the budget again: spent by now, or a unit left for it.
        for (const wake of state.waiting.splice(0)) wake();
        const { limiter, key } = keys[i] as BudgetKey;
        forgetIfIdle(limiter, key, state);
      });
    },
  };
}

/** No unit spent in advance (no budgets, or limiters that failed open). */
const NONE_PRESPENT: readonly boolean[] = [];

/** The longest wait of the spent budgets among those `counts` picks; `0` when none is spent. */
function waitOf(
  keys: readonly BudgetKey[],
  budgets: readonly Budget[],
  counts: (role: Role, i: number) => boolean,
): number {
  let wait = 0;
  keys.forEach((k, i) => {
    if (counts(k.role, i)) wait = Math.max(wait, budgets[i]?.wait ?? 0);
  });
  return wait;
}

/**
 * Whether a budget shows failures: a unit spent (its limiter reports fewer than its `limit`, or
 * `limit` unknown and none left), or an attempt of this process still in flight on it.
 */
function hasFailures(budget: Budget, state: KeyState): boolean {
  return (
    state.held > 0 || budget.wait !== 0 || (budget.limit !== undefined && budget.remaining < budget.limit)
  );
}

/** A whole budget nothing is in flight on: `limit` reported and every unit left. */
function isClean(budget: Budget, state: KeyState): boolean {
  return (
    state.held === 0 && budget.wait === 0 && budget.limit !== undefined && budget.remaining >= budget.limit
  );
}

/**
 * The budgets an attempt counts against: the client's (`c:`), the client's for this user name
 * (`p:`) and the user name's (`u:`). The last two need credentials; `p:` needs a client too.
 */
function budgetKeys(
  config: BasicConfig,
  credential: CredentialCheck | undefined,
  address: string | undefined,
): BudgetKey[] {
  const { perClient, perUsername } = config;
  const bucket = perClient || perUsername ? clientKey(address) : undefined;
  const keys: BudgetKey[] = [];
  if (perClient && bucket !== undefined)
    keys.push({ limiter: perClient, key: `c:${bucket}`, role: "client" });
  if (perUsername && credential) {
    const name = foldedName(credential.username);
    if (bucket !== undefined)
      keys.push({
        limiter: perUsername,
        key: `p:${sha256Base64url(`${bucket}\n${name}`)}`,
        role: "pair",
      });
    keys.push({ limiter: perUsername, key: `u:${sha256Base64url(name)}`, role: "name" });
  }
  return keys;
}

/** An IP address's bucket; any other client key as is, or its digest when long. */
function clientKey(address: string | undefined): string | undefined {
  if (typeof address !== "string" || address === "") return undefined;
  const bucket = ipBucket(address);
  if (bucket !== undefined) return bucket;
  return address.length <= 64 ? `k:${address}` : `h:${sha256Base64url(address)}`;
}

/** The user name as its budgets count it: NFC and lower case, so `ADMIN` spends `admin`'s. */
function foldedName(username: string): string {
  return username.normalize("NFC").toLowerCase();
}

/**
 * Reads every budget (`consume(key, 0)`): per key, how long to wait when it is spent, or the units
 * left. A limiter failure answers `busy` when failing closed and no budgets (`[]`) when open.
 */
async function readBudgets(config: BasicConfig, keys: BudgetKey[]): Promise<Budget[] | BasicOutcome> {
  try {
    return await Promise.all(keys.map(({ limiter, key }) => spent(limiter, key)));
  } catch (err) {
    // Failing open: no budgets, so nothing is counted or held either.
    return limiterFailed(config, err) ?? [];
  }
}

/**
 * A budget as a read finds it: `wait` is the milliseconds to wait when it is spent, `0` when it
 * is not (`remaining` units left of `limit`), or `-1` when a unit was spent on the way (the budget
 * came back between the two calls: that unit is this attempt's failure, recorded in advance).
 */
interface Budget {
  wait: number;
  remaining: number;
  /** The budget's size as the limiter reports it; unknown, no client can be told clean. */
  limit: number | undefined;
}

async function spent(limiter: FailureLimiter, key: string): Promise<Budget> {
  const report = await limiter.consume(key, 0);
  const limit = typeof report.limit === "number" && Number.isFinite(report.limit) ? report.limit : undefined;
  if (report.allowed && report.remaining >= 1) return { wait: 0, remaining: report.remaining, limit };
  // A cost-0 report says "none left" but not when one comes back; a cost-1 call does, and a
  // denied call spends nothing (RFC 6585 §4 and §7.2 of RFC 9110 for Retry-After).
  const probe = await limiter.consume(key, 1);
  return probe.allowed
    ? { wait: -1, remaining: 0, limit }
    : { wait: Math.max(1, probe.retryAfterMs), remaining: 0, limit };
}

/** A failed attempt: one unit of each budget not already spent in step 1, then `invalid`. */
async function recordFailure(
  config: BasicConfig,
  keys: BudgetKey[],
  prespent: readonly boolean[],
): Promise<BasicOutcome> {
  try {
    await Promise.all(keys.map(({ limiter, key }, i) => (prespent[i] ? undefined : limiter.consume(key, 1))));
  } catch (err) {
    const outcome = limiterFailed(config, err);
    if (outcome) return outcome;
  }
  return { result: "invalid" };
}

/** A limiter that threw: `busy` when failing closed; failing open, logged at most once a minute. */
function limiterFailed(config: BasicConfig, err: unknown): BasicOutcome | undefined {
  if (config.failMode === "closed") return { result: "busy", retryAfterMs: config.busyMs, cause: err };
  const now = Date.now();
  if (now - config.lastLog >= 60_000) {
    config.lastLog = now;
    config.logger.warn({ err }, "auth failure limiter failed; Basic attempts go on without failure budgets");
  }
  return undefined;
}

/** Step 2's key: the HMAC of the credentials' cache material, or none when nothing is cached. */
function cacheKeyOf(config: BasicConfig, credential: CredentialCheck): string | undefined {
  if (!config.cache || credential.cacheMaterial === undefined) return undefined;
  return hmacSha256Base64url(config.cacheSecret, credential.cacheMaterial);
}

/**
 * Steps 3 and 4: a verification slot when the check is expensive ({@link SHED} when none), then
 * the check. A `clean` client (no failure on record, nothing in flight) queues ahead of the others
 * and takes a full queue's last place from one of them: a guesser's flood, which has failures by
 * its second attempt, cannot keep a client with a clean record from being verified.
 */
async function runGated(
  config: BasicConfig,
  credential: CredentialCheck,
  clean: boolean,
): Promise<Awaited<ReturnType<VerifyPassword>> | typeof SHED> {
  let release: Release | undefined;
  if (credential.gated) {
    const entry = config.gate.enter(clean);
    if (entry === undefined) return SHED;
    release = typeof entry === "function" ? entry : await entry;
    if (release === undefined) return SHED;
  }
  try {
    return await credential.run();
  } finally {
    release?.();
  }
}

/** Good credentials: their principal, kept in the cache under `cacheKey` (a copy the caller cannot change). */
function authenticated(
  config: BasicConfig,
  result: PrincipalInit,
  cacheKey: string | undefined,
): BasicOutcome {
  const principal = toPrincipal(result, "basic", result.issuer);
  if (cacheKey !== undefined)
    config.cache?.set(
      cacheKey,
      toPrincipal(principal, "basic", principal.issuer),
      Date.now() + config.cacheTtlMs,
    );
  return { result: "authenticated", principal };
}

/** {@link BasicVerifier.check}: decoded Basic credentials through the steps, `verify` as the check. */
function checkCredentials(
  config: BasicConfig,
  credentials: BasicCredentials | undefined,
  address: string | undefined,
): Promise<BasicOutcome> {
  if (!credentials) return attempt(config, undefined, address);
  // RFC 7617 §2.1: with charset="UTF-8" (our challenge) "the server expects character data to be
  // converted to Unicode Normalization Form C ("NFC" ...)"; the user-id's PRECIS profile
  // (UsernameCasePreserved, RFC 8265 §3.3) and the password's (OpaqueString, RFC 8265 §4.2) both
  // have NFC as their normalization rule. A client that did not normalise ("cafe\u0301" for
  // "caf\u00e9") sends the same credentials: verify, the cache key and the user-name budget see the
  // NFC form. NFC only merges canonically equivalent spellings; the profiles' other rules (width
  // mapping, non-ASCII spaces, disallowed code points) are left to verify.
  const username = credentials.username.normalize("NFC");
  const password = credentials.password.normalize("NFC");
  const { verify } = config;
  return attempt(
    config,
    {
      username,
      run: () => verify(username, password),
      // Length-prefixed: `check` is public, and a user name with ":" must not alias another pair.
      cacheMaterial: `${username.length}:${username}:${password}`,
      gated: true,
    },
    address,
  );
}
