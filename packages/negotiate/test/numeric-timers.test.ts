import type { Server } from "node:http";
import { createAdaptorServer } from "@hono/node-server";
import { onError } from "@svc/errors/fetch";
import { type Listening, listenOn } from "@svc/test-utils";
import { Hono } from "hono";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { parseBody } from "../src/fetch.js";

// Where a timer is a plain number (Cloudflare Workers before their Node.js timers, browsers), it
// has no unref(). Here setTimeout answers the number Node's own timer converts to, which
// clearTimeout takes back, as such a runtime's would.

describe("@svc/negotiate/fetch parseBody where setTimeout answers a number", () => {
  let listening: Listening;
  beforeAll(async () => {
    const readBody = parseBody({ timeout: 5000 });
    const app = new Hono();
    app.post("/orders", async (c) => c.json({ got: await readBody(c.req.raw) }, 201));
    app.onError(onError({ logger: { error() {} } }));
    listening = await listenOn(createAdaptorServer({ fetch: app.fetch }) as Server);
    const nodeSetTimeout = globalThis.setTimeout;
    vi.stubGlobal("setTimeout", (handler: () => void, ms?: number) => Number(nodeSetTimeout(handler, ms)));
  });
  afterAll(async () => {
    vi.unstubAllGlobals();
    await listening.close();
  });

  it('POST /orders with {"item":"a"} within the read timeout → 201 with the parsed body', async () => {
    const res = await fetch(`${listening.url}/orders`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ item: "a" }),
    });
    expect(res.status).toBe(201);
    expect(await res.json()).toEqual({ got: { item: "a" } });
  });
});
