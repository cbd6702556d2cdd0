import type { Server } from "node:http";
import { createAdaptorServer } from "@hono/node-server";
import { createPipeline, reply } from "@svc/kernel";
import { fetchAdapter } from "@svc/kernel/fetch";
import { type Listening, listenOn } from "@svc/test-utils";
import { honoPipelineApp, send } from "@svc/test-utils/conformance";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { idempotency } from "../src/fetch.js";
import { MemoryStore } from "../src/index.js";

// Where a timer is a plain number (Cloudflare Workers before their Node.js timers, browsers), it
// has no unref(). Here setInterval answers the number Node's own timer converts to, which
// clearInterval takes back, as such a runtime's would.

describe("@svc/idempotency/fetch where setInterval answers a number", () => {
  let listening: Listening;
  let runs = 0;
  beforeAll(async () => {
    const nodeSetInterval = globalThis.setInterval;
    vi.stubGlobal("setInterval", (handler: () => void, ms?: number) => Number(nodeSetInterval(handler, ms)));
    const svc = fetchAdapter(createPipeline());
    const route = { idempotency: idempotency({ store: new MemoryStore(), required: true, waitMs: 0 }) };
    const app = honoPipelineApp(svc);
    app.post("/orders", async (c) => {
      const body: unknown = await c.req.json();
      return svc.respond(
        c.req.raw,
        () => {
          runs += 1;
          return reply({ run: runs, order: body }, { status: 201 });
        },
        { route, body },
      );
    });
    listening = await listenOn(createAdaptorServer({ fetch: app.fetch }) as Server);
  });
  afterAll(async () => {
    vi.unstubAllGlobals();
    await listening.close();
  });

  it('POST /orders Idempotency-Key: "k-1" → 201, the same POST again → 201 replayed, the handler run once', async () => {
    const post = () =>
      send(listening.url, {
        method: "POST",
        path: "/orders",
        headers: { "Content-Type": "application/json", "Idempotency-Key": '"k-1"' },
        body: JSON.stringify({ item: "a" }),
      });
    const first = await post();
    const again = await post();
    expect(first.status).toBe(201);
    expect(again.status).toBe(201);
    expect(again.text).toBe(first.text);
    expect(JSON.parse(first.text)).toEqual({ run: 1, order: { item: "a" } });
  });
});
