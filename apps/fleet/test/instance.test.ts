import { createServer, type Server } from "node:http";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { ensureBuilt } from "../src/build.js";
import { call } from "../src/http.js";
import { createInstance, type Instance } from "../src/instance.js";

/** One instance on the embedded defaults: nothing but the built server is needed. */
const EMBEDDED = { DATABASE_URL: "sqlite::memory:", LOG_LEVEL: "silent" };

describe("an instance's start", () => {
  let instance: Instance | undefined;
  let foreign: Server | undefined;

  beforeAll(() => ensureBuilt(), 120_000);
  afterEach(async () => {
    await instance?.kill("SIGKILL");
    instance = undefined;
    await new Promise((resolve) => (foreign ? foreign.close(resolve) : resolve(undefined)));
    foreign = undefined;
  });

  it("another process's server on its port, answering /ready 200 → start rejects naming the exit, never ready", async () => {
    instance = await createInstance("taken", EMBEDDED);
    const server = createServer((_req, res) => res.end("not the service"));
    foreign = server;
    await new Promise<void>((resolve) => server.listen(instance?.port, "127.0.0.1", resolve));
    expect((await call(`${instance.url}/ready`)).status).toBe(200);
    await expect(instance.start(60_000)).rejects.toThrow(/taken exited \(code 1.*EADDRINUSE/s);
  }, 90_000);

  it("its port free → ready once its own process answers: /ready is the service's", async () => {
    instance = await createInstance("free", EMBEDDED);
    await instance.start(60_000);
    expect(instance.pid).toBeGreaterThan(0);
    const ready = await call(`${instance.url}/ready`);
    expect(ready.status).toBe(200);
    expect(ready.header("content-type")).toMatch(/^application\/(problem\+)?json/);
  }, 90_000);
});
