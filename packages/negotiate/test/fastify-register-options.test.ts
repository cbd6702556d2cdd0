import Fastify from "fastify";
import { describe, expect, it, onTestFinished } from "vitest";
import { crossOrigin, parseBody } from "../src/fastify.js";

/** Fastify's own register options, which `register` hands the plugin with the plugin's. */
const registerOptions = {
  prefix: "/api",
  logLevel: "warn" as const,
  logSerializers: { req: () => "request" },
};

describe("Fastify's register options given with the plugins' own", () => {
  it("parseBody registered with prefix, logLevel and logSerializers → ready, and a JSON body parsed", async () => {
    const app = Fastify();
    onTestFinished(() => app.close());
    await app.register(
      async (api) => {
        await api.register(parseBody, { ...registerOptions, limit: "1kb" });
        api.post("/echo", async (request) => request.body);
      },
      { prefix: "/api" },
    );
    const res = await app.inject({ method: "POST", url: "/api/echo", payload: { a: 1 } });
    expect([res.statusCode, res.json()]).toEqual([200, { a: 1 }]);
  });

  it("crossOrigin registered with prefix, logLevel and logSerializers → ready, its fields on a response", async () => {
    const app = Fastify();
    onTestFinished(() => app.close());
    await app.register(crossOrigin, { ...registerOptions, origins: ["https://app.example"] });
    app.get("/", async () => "ok");
    const res = await app.inject({ method: "GET", url: "/", headers: { origin: "https://app.example" } });
    expect(res.headers["access-control-allow-origin"]).toBe("https://app.example");
  });
});
