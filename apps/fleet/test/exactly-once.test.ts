import { randomBytes } from "node:crypto";
import type { Agent } from "node:http";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { ensureBuilt } from "../src/build.js";
import { type Fleet, startFleet } from "../src/fleet.js";
import { basic, call, keepAliveAgent, type Reply } from "../src/http.js";
import { waitFor } from "../src/load.js";
import { type TcpProxy, tcpProxy } from "../src/tcp-proxy.js";
import { fleetServices } from "./setup.js";

/**
 * Exactly once under faults (issue 44): clients send POST /transfers through nginx to three
 * instances, each key with its own body, and retry the same key and body on a network error, a
 * time-out, a 5xx or a 409 with `Retry-After`, while one instance at a time is killed (-9) and
 * restarted, stopped (SIGSTOP) for 2 s, or cut off from PostgreSQL (where the idempotency records
 * commit with the transfers) or from Redis for 2 s. After the load, once no claim's lease is left,
 * every key is sent once more. Each key's amount is its own, so PostgreSQL's transfers say which
 * key created each of them: a key executed twice shows as two transfers of one amount.
 */
const services = fleetServices();

function setting(name: string, fallback: number, min: number, max: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === "") return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max)
    throw new Error(`${name} must be a whole number from ${min} to ${max} (got ${raw})`);
  return value;
}

/** How long the load runs (it also runs until each kind of fault has been injected once). */
const SECONDS = setting("EXACTLY_ONCE_SECONDS", 20, 5, 3600);
/** Concurrent clients, each sending one key at a time. */
const CLIENTS = setting("EXACTLY_ONCE_CLIENTS", 16, 1, 256);
/** Pause between the end of one fault and the next (one at a time, on the instances in turn). */
const FAULT_INTERVAL_MS = setting("EXACTLY_ONCE_FAULT_INTERVAL_MS", 1000, 100, 60_000);
/** A client gives up on an attempt after this long and retries. */
const TIMEOUT_MS = setting("EXACTLY_ONCE_TIMEOUT_MS", 3000, 200, 60_000);
/** Retries of one key after its first attempt. */
const MAX_RETRIES = 5;
/** How long a SIGSTOP or a cut connection lasts. */
const FAULT_MS = 2000;
/**
 * How long an instance may take to be ready, at the start (beside the other fleet suites of a
 * run) and after a kill (under the load).
 */
const RESTART_TIMEOUT_MS = 60_000;
/** The longest `Retry-After` a client waits; the server's may be longer. */
const RETRY_AFTER_CAP_MS = 2000;
/**
 * The instances' Idempotency-Key lease (`IDEMPOTENCY_LEASE_SECONDS`; 60 s by default): a claim
 * left by a killed instance frees its key this long after the kill. Short, so the final retry
 * waits seconds for it; still longer than a SIGSTOP, so a stopped instance's claims outlive it.
 */
const LEASE_SECONDS = 5;
/** The longest wait for every lease to end (a restart under load may come first). */
const LEASE_WAIT_MS = LEASE_SECONDS * 1000 + RESTART_TIMEOUT_MS;

const FAULTS = ["kill -9 + restart", "SIGSTOP 2 s", "PostgreSQL cut 2 s", "Redis cut 2 s"] as const;
type FaultKind = (typeof FAULTS)[number];

/** One Idempotency-Key, its body, and what the client saw. */
interface Key {
  key: string;
  /** The amount in cents: each key's own, so its transfer is found by amount. */
  minor: number;
  body: string;
  attempts: number;
  /** The 2xx the load got, if any. */
  success?: { status: number; location: string | undefined };
  /** A status that is neither success nor worth a retry (any 4xx but a 409 with Retry-After). */
  unexpected?: string;
  /** Each attempt's status, or "timeout" / "network error". */
  history: Array<number | string>;
  /** The last answer of the final retry, after the leases. */
  final?: {
    status: number | string;
    location: string | undefined;
    replayed: string | undefined;
    body?: string;
  };
}

const tally = (m: Map<string, number>, label: string) => m.set(label, (m.get(label) ?? 0) + 1);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const retryAfterMs = (reply: Reply) => {
  const seconds = Number(reply.header("retry-after"));
  return Number.isFinite(seconds) && seconds >= 0 ? Math.min(seconds * 1000, RETRY_AFTER_CAP_MS) : undefined;
};
const decimal = (minor: number) => `${Math.floor(minor / 100)}.${String(minor % 100).padStart(2, "0")}`;

describe.skipIf(!services)(
  "exactly once under faults: the fleet, retrying clients, kill -9 / SIGSTOP / cuts",
  () => {
    let fleet: Fleet;
    let base: string;
    let agent: Agent;
    const pgProxies: TcpProxy[] = [];
    const redisProxies: TcpProxy[] = [];
    const resumes: Array<() => void> = [];

    beforeAll(async () => {
      ensureBuilt();
      const { databaseUrl, redisUrl } = services as NonNullable<typeof services>;
      // Each instance reaches PostgreSQL and Redis through a proxy of its own, so one instance can
      // be cut off while the others go on.
      const via = (url: string, proxy: TcpProxy) => {
        const u = new URL(url);
        u.hostname = "127.0.0.1";
        u.port = String(proxy.port);
        return u.toString();
      };
      const pg = new URL(databaseUrl);
      const redis = new URL(redisUrl);
      for (let i = 0; i < 3; i++) {
        pgProxies.push(await tcpProxy({ host: pg.hostname, port: Number(pg.port || 5432) }));
        redisProxies.push(await tcpProxy({ host: redis.hostname, port: Number(redis.port || 6379) }));
      }
      fleet = await startFleet({
        databaseUrl,
        redisUrl,
        label: "exactly-once",
        readyTimeoutMs: RESTART_TIMEOUT_MS,
        env: {
          RATE_LIMIT_MAX: "1000000",
          LOG_LEVEL: "warn",
          IDEMPOTENCY_LEASE_SECONDS: String(LEASE_SECONDS),
        },
        instanceEnv: (i) => ({
          DATABASE_URL: via(databaseUrl, pgProxies[i] as TcpProxy),
          REDIS_URL: via(redisUrl, redisProxies[i] as TcpProxy),
        }),
      });
      base = fleet.proxy?.url ?? "";
      agent = keepAliveAgent(false, CLIENTS);
    }, 180_000);

    afterAll(async () => {
      for (const resume of resumes) resume();
      agent?.destroy();
      await fleet?.close();
      await Promise.all([...pgProxies, ...redisProxies].map((p) => p.close()));
    }, 60_000);

    afterEach((context) => {
      if (context.task.result?.state === "fail") console.error(fleet?.diagnostics());
    });

    it(
      "no key executes twice, no money is created or lost, every 2xx replays its Location, no 500",
      async () => {
        const started = performance.now();
        const issued = await call(`${base}/auth/token`, {
          method: "POST",
          headers: { authorization: basic("admin") },
        });
        expect(issued.status).toBe(200);
        const auth = `Bearer ${issued.json<{ access_token: string }>().access_token}`;

        const accounts = await fleet.query<{ id: number; owner: string }>(
          "select id::int as id, owner from accounts where currency = 'EUR' order by id",
        );
        const treasury = accounts.find((a) => a.owner === "treasury")?.id as number;
        const others = accounts.filter((a) => a.id !== treasury).map((a) => a.id);
        expect(others.length).toBeGreaterThan(0);
        const balances = async () =>
          new Map(
            (
              await fleet.query<{ id: number; balance: string }>(
                "select id::int as id, balance::text as balance from accounts",
              )
            ).map((r) => [r.id, BigInt(r.balance)]),
          );
        const sum = (m: Map<number, bigint>) => [...m.values()].reduce((s, v) => s + v, 0n);
        const before = await balances();
        const [{ last }] = (await fleet.query<{ last: number }>(
          "select coalesce(max(id), 0)::int as last from transfers",
        )) as [{ last: number }];

        // ---- the load: one key at a time per client, retried with the same key and body
        const run = randomBytes(4).toString("hex");
        const keys: Key[] = [];
        const statuses = new Map<string, number>();
        let retries = 0;
        let running = true;
        /** Every 500, with its correlation id (each attempt sends its own) to find it in the logs. */
        const serverErrors: Array<{ key: string; correlationId: string; body: string }> = [];
        const post = (k: Key, timeoutMs: number, correlationId: string) =>
          call(`${base}/transfers`, {
            method: "POST",
            agent,
            headers: {
              authorization: auth,
              "idempotency-key": `"${k.key}"`,
              "content-type": "application/json",
              "x-correlation-id": correlationId,
            },
            body: k.body,
            timeoutMs,
          });
        /**
         * One key as a client sends it: again with the same key and body after a network error, a
         * time-out, a 5xx or a 409 with `Retry-After`, at most MAX_RETRIES times. The last reply (or
         * error) is returned; `seen` counts each one by status.
         */
        const send = async (k: Key, seen: Map<string, number>): Promise<Reply | string> => {
          let last: Reply | string = "not sent";
          for (let attempt = 0; attempt <= MAX_RETRIES; attempt++) {
            if (attempt > 0) retries++;
            k.attempts++;
            let wait = 100 * 2 ** attempt;
            try {
              const correlationId = `${k.key}-${k.attempts}`;
              const reply = await post(k, TIMEOUT_MS, correlationId);
              if (reply.status === 500) serverErrors.push({ key: k.key, correlationId, body: reply.body });
              last = reply;
              k.history.push(reply.status);
              tally(seen, String(reply.status));
              if (reply.status >= 200 && reply.status < 300) return reply;
              const after = retryAfterMs(reply);
              if (reply.status === 409 && after !== undefined) wait = after;
              else if (reply.status >= 500) wait = after ?? wait;
              else return reply;
            } catch (err) {
              last = /timed out/.test(String(err)) ? "timeout" : "network error";
              k.history.push(last);
              tally(seen, last);
            }
            if (attempt < MAX_RETRIES) await sleep(wait);
          }
          return last;
        };
        const clients = Array.from({ length: CLIENTS }, async () => {
          while (running) {
            const index = keys.length;
            const minor = index + 1;
            // Treasury → someone, then someone → treasury: the balances stay about where they were.
            const other = others[index % others.length] as number;
            const [from, to] = index % 2 === 0 ? [treasury, other] : [other, treasury];
            const k: Key = {
              key: `eo-${run}-${index}`,
              minor,
              body: `{"fromAccountId":${from},"toAccountId":${to},"amount":${decimal(minor)}}`,
              attempts: 0,
              history: [],
            };
            keys.push(k);
            const reply = await send(k, statuses);
            if (typeof reply !== "string" && reply.status >= 200 && reply.status < 300)
              k.success = { status: reply.status, location: reply.header("location") };
            else if (
              typeof reply !== "string" &&
              reply.status < 500 &&
              !(reply.status === 409 && reply.header("retry-after"))
            )
              k.unexpected = `${reply.status} ${reply.body.slice(0, 300)}`;
          }
        });

        // ---- the faults: one every FAULT_INTERVAL_MS, on the instances in turn. A killed instance
        // restarts while the next faults hit the others; no instance takes two faults at once, and
        // at most one is down.
        const faults = new Map<FaultKind, number>(FAULTS.map((f) => [f, 0]));
        const busy = new Set<number>();
        let restarting: Promise<void> = Promise.resolve();
        let restartMs = 0;
        const inject = async (kind: FaultKind, i: number) => {
          const instance = fleet.instances[i] as (typeof fleet.instances)[number];
          faults.set(kind, (faults.get(kind) ?? 0) + 1);
          busy.add(i);
          if (kind === "kill -9 + restart") {
            await restarting;
            await instance.kill("SIGKILL");
            const at = performance.now();
            restarting = instance.start(RESTART_TIMEOUT_MS).finally(() => {
              restartMs = Math.max(restartMs, performance.now() - at);
              busy.delete(i);
            });
            // Awaited below; meanwhile a failed restart is not an unhandled rejection.
            restarting.catch(() => {});
            return;
          }
          try {
            if (kind === "SIGSTOP 2 s") {
              const pid = instance.pid as number;
              const resume = () => process.kill(pid, "SIGCONT");
              process.kill(pid, "SIGSTOP");
              resumes.push(resume);
              await sleep(FAULT_MS);
              resume();
              resumes.pop();
            } else {
              const proxy = (kind === "PostgreSQL cut 2 s" ? pgProxies : redisProxies)[i] as TcpProxy;
              await proxy.cut("refuse");
              await sleep(FAULT_MS);
              await proxy.restore();
            }
          } finally {
            busy.delete(i);
          }
        };
        const loadEnds = performance.now() + SECONDS * 1000;
        let injected = 0;
        let turn = 0;
        try {
          while (performance.now() < loadEnds || injected < FAULTS.length) {
            await sleep(FAULT_INTERVAL_MS);
            const n = fleet.instances.length;
            const target = Array.from({ length: n }, (_, d) => (turn + d) % n).find((i) => !busy.has(i));
            if (target === undefined) continue;
            turn = target + 1;
            await inject(FAULTS[injected % FAULTS.length] as FaultKind, target);
            injected++;
          }
        } finally {
          running = false;
          await Promise.all(clients);
        }
        const loadMs = performance.now() - started;

        // ---- after the load: no live claim left (a killed instance may restart meanwhile), every
        // instance ready, then every key once more
        /** Waits until no claim is in flight; answers how many were, at most. */
        const leasesEnd = async () => {
          let live = 0;
          await waitFor(
            "every idempotency lease to end",
            async () => {
              const [row] = await fleet.query<{ n: number }>(
                "select count(*)::int as n from idempotency_keys where state = 'in-flight' and expires_at > clock_timestamp()",
              );
              live = Math.max(live, row?.n ?? 0);
              return row?.n === 0;
            },
            LEASE_WAIT_MS,
          );
          return live;
        };
        const leaseStarted = performance.now();
        const [, liveClaims] = await Promise.all([restarting, leasesEnd()]);
        const leaseWaitMs = performance.now() - leaseStarted;
        for (const instance of fleet.instances) {
          await waitFor(
            `${instance.name} to be ready`,
            async () => (await call(`${instance.url}/ready`)).status === 200,
          );
        }

        // The same client (a 503 with Retry-After is an answer the retry turns into the replay).
        const finalStarted = performance.now();
        const retriesDuringLoad = retries;
        const requestsDuringLoad = keys.reduce((s, k) => s + k.attempts, 0);
        const finalStatuses = new Map<string, number>();
        const sendAll = async (batch: Key[]) => {
          let next = 0;
          await Promise.all(
            Array.from({ length: CLIENTS }, async () => {
              for (let k = batch[next++]; k; k = batch[next++]) {
                k.history.push("| final");
                const reply = await send(k, finalStatuses);
                k.final =
                  typeof reply === "string"
                    ? { status: reply, location: undefined, replayed: undefined }
                    : {
                        status: reply.status,
                        location: reply.header("location"),
                        replayed: reply.header("idempotent-replayed"),
                        ...(reply.status === 202 ? {} : { body: reply.body.slice(0, 300) }),
                      };
              }
            }),
          );
        };
        await sendAll(keys);
        // A claim whose statement outlasted the store's 1 s limit (a 503) may still have landed; the
        // store takes it back, but not when its instance was killed first: that key answers 409
        // until the lease ends, with nothing executed. Keys left without a 202 get one more round
        // once no claim is in flight.
        const secondRound = keys.filter((k) => k.final?.status !== 202);
        if (secondRound.length > 0) {
          await leasesEnd();
          await sendAll(secondRound);
        }
        const finalRetries = retries - retriesDuringLoad;
        const finalRequests = keys.reduce((s, k) => s + k.attempts, 0) - requestsDuringLoad;
        const finalMs = performance.now() - finalStarted;

        // ---- what PostgreSQL holds
        let pending = 0;
        await waitFor(
          "the accepted transfers to be executed",
          async () => {
            const [row] = await fleet.query<{ n: number }>(
              "select count(*)::int as n from transfers where id > $1 and status in ('PENDING', 'PROCESSING')",
              [last],
            );
            pending = row?.n ?? 0;
            return pending === 0;
          },
          20_000,
        ).catch(() => {});
        const transfers = await fleet.query<{
          id: number;
          from: number;
          to: number;
          amount: string;
          status: string;
        }>(
          `select id::int as id, from_account_id::int as "from", to_account_id::int as "to", amount::text as amount, status
         from transfers where id > $1`,
          [last],
        );
        const after = await balances();
        const byAmount = new Map<number, number>();
        for (const t of transfers) byAmount.set(Number(t.amount), (byAmount.get(Number(t.amount)) ?? 0) + 1);
        const amountOf = new Map(transfers.map((t) => [t.id, Number(t.amount)]));
        const duplicates = keys.filter((k) => (byAmount.get(k.minor) ?? 0) > 1);
        const strangers = transfers.filter(
          (t) => !(Number(t.amount) >= 1 && Number(t.amount) <= keys.length),
        );
        // The balances moved by exactly the completed transfers.
        const expected = new Map(before);
        for (const t of transfers.filter((t) => t.status === "COMPLETED")) {
          expected.set(t.from, (expected.get(t.from) ?? 0n) - BigInt(t.amount));
          expected.set(t.to, (expected.get(t.to) ?? 0n) + BigInt(t.amount));
        }
        const idOf = (location: string | undefined) =>
          Number(/\/transfers\/(\d+)$/.exec(location ?? "")?.[1]);
        const succeeded = keys.filter((k) => k.success);
        const notReplayed = succeeded.filter(
          (k) =>
            k.final?.status !== k.success?.status ||
            k.final?.location !== k.success?.location ||
            k.final?.replayed !== "true",
        );
        const finalNot202 = keys.filter((k) => k.final?.status !== 202);
        const wrongTransfer = keys.filter(
          (k) => k.final?.status === 202 && amountOf.get(idOf(k.final.location)) !== k.minor,
        );
        const missing = keys.filter((k) => byAmount.get(k.minor) !== 1);
        const fivehundreds = serverErrors.length;
        const logged = (id: string) =>
          fleet.instances.flatMap((i) =>
            i
              .output()
              .split("\n")
              .filter((line) => line.includes(`"${id}"`))
              .map((line) => `${i.name}: ${line.slice(0, 1500)}`),
          );

        const list = (m: Map<string | number, number>) =>
          [...m]
            .sort(([a], [b]) => String(a).localeCompare(String(b)))
            .map(([s, n]) => `${s} ×${n}`)
            .join(", ");
        // One block in the CI log (console.warn: the lint rule keeps console.log for debugging).
        console.warn(
          [
            "",
            "=== exactly once under faults (apps/fleet/test/exactly-once.test.ts)",
            `setup           3 instances behind nginx, ${CLIENTS} clients, load ${SECONDS} s, ${FAULT_INTERVAL_MS} ms between faults, client time-out ${TIMEOUT_MS} ms, ≤ ${MAX_RETRIES} retries`,
            `keys            ${keys.length} (2xx during the load ${succeeded.length}, gave up ${keys.filter((k) => !k.success && !k.unexpected).length}, unexpected ${keys.filter((k) => k.unexpected).length})`,
            `faults          ${injected} injected: ${FAULTS.map((f) => `${f} ×${faults.get(f)}`).join(", ")} (the longest restart ${(restartMs / 1000).toFixed(1)} s)`,
            `load requests   ${requestsDuringLoad}, ${retriesDuringLoad} of them retries: ${list(statuses)}`,
            `final retry     every key after the leases (live claims when the load ended ${liveClaims}, waited ${(leaseWaitMs / 1000).toFixed(1)} s): ${finalRequests} requests, ${finalRetries} of them retries: ${list(finalStatuses)}; ${secondRound.length} keys in a second round`,
            `replays         ${succeeded.length - notReplayed.length} of ${succeeded.length} keys with a 2xx during the load replayed their own Location`,
            `transfers       ${transfers.length} created (${transfers.filter((t) => t.status === "COMPLETED").length} completed, ${transfers.filter((t) => t.status === "FAILED").length} failed, ${pending} pending)`,
            `duplicates      ${duplicates.length} keys executed twice`,
            `500s            ${fivehundreds}`,
            `balance sum     before ${sum(before)} / after ${sum(after)} cents`,
            `duration        ${((performance.now() - started) / 1000).toFixed(1)} s (load and drain ${(loadMs / 1000).toFixed(1)} s, lease wait ${(leaseWaitMs / 1000).toFixed(1)} s, final retry ${(finalMs / 1000).toFixed(1)} s)`,
            "",
          ].join("\n"),
        );

        expect(duplicates.map((k) => `${k.key}: ${byAmount.get(k.minor)} transfers`)).toEqual([]);
        expect(strangers).toEqual([]);
        expect(sum(after)).toBe(sum(before));
        expect(after).toEqual(expected);
        const show = (k: Key) => ({
          key: k.key,
          history: k.history.join(" "),
          success: k.success,
          final: k.final,
        });
        expect(notReplayed.map(show)).toEqual([]);
        expect(finalNot202.map(show)).toEqual([]);
        expect(wrongTransfer.map(show)).toEqual([]);
        expect(missing.map((k) => `${k.key}: ${byAmount.get(k.minor) ?? 0} transfers`)).toEqual([]);
        expect(serverErrors.map((e) => ({ ...e, logged: logged(e.correlationId) }))).toEqual([]);
        expect(keys.filter((k) => k.unexpected).map((k) => `${k.key}: ${k.unexpected}`)).toEqual([]);
        // A run that needed no retry, or lacked a kind of fault, proved nothing.
        expect(retriesDuringLoad).toBeGreaterThan(0);
        for (const kind of FAULTS) expect(faults.get(kind), kind).toBeGreaterThan(0);
      },
      (SECONDS + 240) * 1000,
    );
  },
);
