import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer } from "../src/harness.mjs";

// The run must fail loudly, not measure nothing, when a server cannot start.
describe("startServer", () => {
  let dir = "";
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "svc-bench-server-"));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("a server that throws at start-up → rejects with its stderr", async () => {
    const script = join(dir, "crash.mjs");
    await writeFile(script, 'throw new Error("database file is locked");\n');
    await expect(startServer({ script })).rejects.toThrow(
      /exited \(1\) before it answered[\s\S]*database file is locked/,
    );
  });

  it("a server that never listens → rejects after the timeout and is killed", async () => {
    const script = join(dir, "silent.mjs");
    await writeFile(script, "setInterval(() => {}, 1000);\n");
    await expect(startServer({ script, timeoutMs: 500 })).rejects.toThrow(
      /did not answer on http:\/\/127\.0\.0\.1:\d+ within 500 ms/,
    );
  });

  it("readyStatus 200 on a path that answers 404 → never ready", async () => {
    const script = join(dir, "not-found.mjs");
    await writeFile(
      script,
      'import { createServer } from "node:http";\n' +
        'createServer((_req, res) => { res.statusCode = 404; res.end(); }).listen(Number(process.env.PORT), "127.0.0.1");\n',
    );
    await expect(
      startServer({ script, readyPath: "/health", readyStatus: 200, timeoutMs: 800 }),
    ).rejects.toThrow(/did not answer/);
  });

  it("a server that answers → url, pid and stop()", async () => {
    const script = join(dir, "ok.mjs");
    await writeFile(
      script,
      'import { createServer } from "node:http";\n' +
        'createServer((_req, res) => res.end("ok")).listen(Number(process.env.PORT), "127.0.0.1");\n',
    );
    const server = await startServer({ script });
    try {
      expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(await (await fetch(server.url)).text()).toBe("ok");
      expect(server.pid).toBeGreaterThan(0);
    } finally {
      await server.stop();
    }
    await expect(fetch(server.url)).rejects.toThrow();
  });
});
