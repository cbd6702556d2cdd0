import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fastifyGate } from "../src/fastify.js";
import { type Gate, HttpError } from "../src/index.js";

/** Fastify's hook arguments for a gate called outside a server: the view reads `raw` alone. */
function hookArgs(): { request: FastifyRequest; reply: FastifyReply; fields: Record<string, unknown> } {
  const fields: Record<string, unknown> = {};
  const raw = { method: "GET", url: "/", headers: {}, rawHeaders: [], socket: {} };
  const request = { raw, method: "GET", server: undefined } as unknown as FastifyRequest;
  const reply = {
    header(name: string, value: unknown) {
      fields[name.toLowerCase()] = value;
      return this;
    },
    getHeader: (name: string) => fields[name.toLowerCase()],
    removeHeader(name: string) {
      delete fields[name.toLowerCase()];
      return this;
    },
  } as unknown as FastifyReply;
  return { request, reply, fields };
}

describe("@svc/kernel/fastify: fastifyGate decides in the turn a gate decides in", () => {
  it("a gate that lets the request through at once → done() before the hook returns", () => {
    const { request, reply } = hookArgs();
    const calls: unknown[][] = [];
    const hook = fastifyGate(() => undefined) as unknown as (...args: unknown[]) => unknown;
    hook(request, reply, (...args: unknown[]) => calls.push(args));
    expect(calls).toEqual([[]]);
  });

  it("a passage decided at once → its fields on the reply, done() in the same turn", () => {
    const { request, reply, fields } = hookArgs();
    const calls: unknown[][] = [];
    const gate: Gate = () => ({ fields: { RateLimit: "limit=10" }, vary: ["Origin"] });
    (fastifyGate(gate) as unknown as (...args: unknown[]) => unknown)(request, reply, (...args: unknown[]) =>
      calls.push(args),
    );
    expect(calls).toEqual([[]]);
    expect(fields).toEqual({ ratelimit: "limit=10", vary: "Origin" });
  });

  it("a refusal thrown at once → done(err) in the same turn", () => {
    const { request, reply } = hookArgs();
    const refusal = new HttpError(421, "Misdirected Request");
    const calls: unknown[][] = [];
    const gate: Gate = () => {
      throw refusal;
    };
    (fastifyGate(gate) as unknown as (...args: unknown[]) => unknown)(request, reply, (...args: unknown[]) =>
      calls.push(args),
    );
    expect(calls).toEqual([[refusal]]);
  });
});

describe("@svc/kernel/fastify: gates as hooks of a listening server", () => {
  let app: FastifyInstance;
  let url: string;
  beforeAll(async () => {
    app = Fastify();
    const later: Gate = async () => ({ fields: { "X-Later": "1" } });
    const answer: Gate = (view) =>
      view.headers["x-answer"] === undefined
        ? undefined
        : { answer: { status: 204, fields: { "x-answered": "yes" }, vary: [], body: undefined } };
    const refuse: Gate = (view) => {
      if (view.headers["x-refuse"] !== undefined)
        throw Object.assign(new Error("refused"), { statusCode: 429 });
      return undefined;
    };
    app.addHook("onRequest", fastifyGate(later));
    app.addHook("onRequest", fastifyGate(answer));
    app.addHook("onRequest", fastifyGate(refuse));
    app.get("/", async () => "route");
    await app.listen({ port: 0, host: "127.0.0.1" });
    url = `http://127.0.0.1:${(app.server.address() as { port: number }).port}/`;
  });
  afterAll(() => app.close());

  it("GET → the route, with the asynchronous gate's field", async () => {
    const res = await fetch(url);
    expect(res.status).toBe(200);
    expect(res.headers.get("x-later")).toBe("1");
    expect(await res.text()).toBe("route");
  });

  it("X-Answer → the gate's 204, no route, no later gate", async () => {
    const res = await fetch(url, { headers: { "x-answer": "1", "x-refuse": "1" } });
    expect(res.status).toBe(204);
    expect(res.headers.get("x-answered")).toBe("yes");
    expect(res.headers.get("x-later")).toBe("1");
  });

  it("X-Refuse → the refusal's status", async () => {
    const res = await fetch(url, { headers: { "x-refuse": "1" } });
    expect(res.status).toBe(429);
  });
});
