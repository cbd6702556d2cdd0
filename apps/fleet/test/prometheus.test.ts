import { randomUUID } from "node:crypto";
import { isDeepStrictEqual } from "node:util";
import { freePort } from "@svc/test-utils";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { ensureBuilt } from "../src/build.js";
import { type Fleet, startFleet } from "../src/fleet.js";
import { basic, call } from "../src/http.js";
import { type Prometheus, prometheusAvailable, startPrometheus } from "../src/prometheus.js";
import { fleetServices } from "./setup.js";

const services = fleetServices();
const available = services !== undefined && prometheusAvailable();

/** The fleet-wide rate limit: per principal, else per client address. */
const L = 6;
/** Requests one anonymous client sends past the limit: each one a 429. */
const LIMITED = 5;
/** Times one POST is sent again with its Idempotency-Key after it was created: each one a replay. */
const REPLAYS = 3;

/** The route the 429s are on, and the one the POSTs are on, as the OpenAPI document names them. */
const LIMITED_ROUTE = "/employees";
const REVIEWS_ROUTE = "/products/{parentId}/reviews";

/**
 * The PromQL the test checks, each summed over the three instances (the `fleet` job). A series
 * without `http_route` would show as a group of its own, named `(no route)`.
 */
const QUERIES = {
  up: 'sum(up{job="fleet"})',
  limitedByRoute:
    'sum by (http_route) (http_server_request_duration_count{job="fleet",http_response_status_code="429"})',
  rejected: 'sum(svc_rate_limiting_requests_total{job="fleet",svc_rate_limiting_result="rejected"})',
  replayed: 'sum(svc_idempotency_requests_total{job="fleet",svc_idempotency_result="replayed"})',
  createdByRoute:
    'sum by (http_route) (http_server_request_duration_count{job="fleet",http_request_method="POST",http_response_status_code="201"})',
};

/**
 * The fleet as an operator sees it: Prometheus scrapes each instance's `/metrics` directly (not
 * through nginx, which would hand each scrape to whichever instance is next), and its sums over
 * the instances must equal what the clients caused through nginx.
 */
describe.skipIf(!available)("a fleet of three instances scraped by Prometheus", () => {
  let fleet: Fleet;
  let proxyUrl: string;
  let prometheus: Prometheus | undefined;
  /** Each instance's metrics listener, the target Prometheus scrapes (its `instance` label). */
  let metricsPorts: number[] = [];

  beforeAll(async () => {
    ensureBuilt();
    // Each instance serves its metrics on a listener of its own (METRICS_PORT, loopback), never
    // on the API's port that nginx forwards to.
    metricsPorts = [await freePort(), await freePort(), await freePort()];
    fleet = await startFleet({
      databaseUrl: services?.databaseUrl ?? "",
      redisUrl: services?.redisUrl ?? "",
      label: "fleet-prom",
      env: {
        RATE_LIMIT_MAX: String(L),
        RATE_LIMIT_WINDOW_SECONDS: "600",
        DEMO_USERS: "idem:idem:admin",
        TELEMETRY: "on",
      },
      instanceEnv: (i) => ({ METRICS_PORT: String(metricsPorts[i]) }),
    });
    proxyUrl = fleet.proxy?.url ?? "";
    prometheus = await startPrometheus(metricsPorts.map((port) => `127.0.0.1:${port}`));
  }, 180_000);

  afterAll(async () => {
    await prometheus?.stop();
    await fleet?.close();
  }, 30_000);

  afterEach((context) => {
    if (context.task.result?.state === "fail")
      console.error(`${fleet?.diagnostics()}\n--- prometheus\n${prometheus?.log().slice(-3000)}`);
  });

  /** Each query's result now: a scalar sum as a number, a `sum by (http_route)` as route → value. */
  async function snapshot() {
    const byRoute = async (promql: string) =>
      Object.fromEntries(
        ((await prometheus?.query(promql)) ?? []).map((s) => [s.metric.http_route ?? "(no route)", s.value]),
      );
    const total = async (promql: string) => (await prometheus?.query(promql))?.[0]?.value ?? 0;
    return {
      up: await total(QUERIES.up),
      limitedByRoute: await byRoute(QUERIES.limitedByRoute),
      rejected: await total(QUERIES.rejected),
      replayed: await total(QUERIES.replayed),
      createdByRoute: await byRoute(QUERIES.createdByRoute),
    };
  }

  it(`${L + LIMITED} anonymous GETs from one client and a POST sent ${REPLAYS} more times with its Idempotency-Key, through nginx → Prometheus's sums over the instances say ${LIMITED} 429s on ${LIMITED_ROUTE} and ${REPLAYS} replays`, async () => {
    const replies = await Promise.all(
      Array.from({ length: L + LIMITED }, () => call(`${proxyUrl}/employees`, { localAddress: "127.0.0.3" })),
    );
    // Anonymous reads are counted, then refused by the authorization check.
    expect(replies.map((r) => r.status).sort()).toEqual([...Array(L).fill(401), ...Array(LIMITED).fill(429)]);

    // One at a time, so each repeat finds the first one's outcome stored: a replay, never a 409.
    const key = randomUUID();
    const send = () =>
      call(`${proxyUrl}/products/1/reviews`, {
        method: "POST",
        localAddress: "127.0.0.4",
        headers: { authorization: basic("idem"), "idempotency-key": key },
        body: { author: `prom-${key}`, rating: 5, comment: "scraped" },
      });
    const created = await send();
    expect(created.status, created.body).toBe(201);
    expect(created.header("idempotent-replayed")).toBeUndefined();
    for (let i = 0; i < REPLAYS; i++) {
      const replay = await send();
      expect([replay.status, replay.header("idempotent-replayed")]).toEqual([201, "true"]);
      expect(replay.header("location")).toBe(created.header("location"));
    }

    const expected = {
      up: fleet.instances.length,
      limitedByRoute: { [LIMITED_ROUTE]: LIMITED },
      rejected: LIMITED,
      replayed: REPLAYS,
      createdByRoute: { [REVIEWS_ROUTE]: 1 + REPLAYS },
    };
    // Scrapes run every second, but Prometheus hands a new target list to its scrapers on a 5 s
    // tick, so the first scrape comes some 5 s after its start: most of this wait.
    const deadline = Date.now() + 20_000;
    let seen = await snapshot();
    while (!isDeepStrictEqual(seen, expected) && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 250));
      seen = await snapshot();
    }
    expect(seen).toEqual(expected);

    // Every instance is a target of its own, and round-robin spread the replays over more than one.
    const up = await prometheus?.query('up{job="fleet"}');
    expect(up?.map((s) => s.metric.instance).sort()).toEqual(
      metricsPorts.map((port) => `127.0.0.1:${port}`).sort(),
    );
    const replayedOn = await prometheus?.query(
      'sum by (instance) (svc_idempotency_requests_total{job="fleet",svc_idempotency_result="replayed"})',
    );
    expect(replayedOn?.length).toBeGreaterThan(1);
  }, 40_000);
});
