import { execFile } from "node:child_process";
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { build } from "esbuild";
import { describe, expect, it } from "vitest";

const exec = promisify(execFile);
const here = fileURLToPath(new URL(".", import.meta.url));

/**
 * A Fastify app authenticating every request with the plugin (one cached Bearer token), served
 * 20,000 requests over keep-alive connections in a child process that V8 tells each scavenge's
 * promoted bytes (`--trace-gc-nvp`). A request's objects die with its response, so the young
 * generation's collector should promote next to nothing; the plugin's former view (an object with
 * an `ip` getter over the request) made every request survive, about 1 MB a scavenge.
 */
describe("@svc/auth/fastify under load", () => {
  it("leaves no request to the old generation: a few KB promoted a scavenge, not a MB", async () => {
    // Beside the package, so that the script finds the workspace's node_modules at run time.
    await mkdir(join(here, "../node_modules/.cache"), { recursive: true });
    const dir = await mkdtemp(join(here, "../node_modules/.cache/young-requests-"));
    try {
      const script = join(dir, "serve.mjs");
      await build({
        stdin: {
          contents: `
            import { request, Agent } from "node:http";
            import Fastify from "fastify";
            import { SignJWT } from "jose";
            import { requestState } from "@svc/kernel";
            import { auth } from ${JSON.stringify(join(here, "../src/fastify.ts"))};
            const secret = new TextEncoder().encode("young-requests-secret-of-32-bytes");
            const app = Fastify();
            await app.register(auth, { realm: "api", bearer: { secret, algorithms: ["HS256"] } });
            app.get("/me", async (req) => ({ id: requestState(req).principal?.id }));
            await app.listen({ port: 0, host: "127.0.0.1" });
            const port = app.server.address().port;
            const token = await new SignJWT({}).setProtectedHeader({ alg: "HS256" }).setSubject("ada").setExpirationTime("5m").sign(secret);
            const agent = new Agent({ keepAlive: true, maxSockets: 8 });
            const one = () => new Promise((resolve, reject) => {
              const req = request({ host: "127.0.0.1", port, path: "/me", agent, headers: { authorization: "Bearer " + token } }, (res) => {
                res.resume();
                res.on("end", () => (res.statusCode === 200 ? resolve() : reject(new Error("status " + res.statusCode))));
              });
              req.on("error", reject);
              req.end();
            });
            let sent = 0;
            await Promise.all(Array.from({ length: 8 }, async () => { while (sent++ < 20000) await one(); }));
            agent.destroy();
            await app.close();
          `,
          resolveDir: here,
          loader: "ts",
        },
        bundle: true,
        format: "esm",
        platform: "node",
        packages: "external",
        outfile: script,
        logLevel: "silent",
      });
      const { stdout } = await exec(process.execPath, ["--trace-gc-nvp", script], {
        cwd: here,
        maxBuffer: 64 * 1024 * 1024,
      });
      const promoted = [...stdout.matchAll(/gc=s .*? promoted=(\d+)/g)].map((m) => Number(m[1]));
      // Enough scavenges to judge: the young generation fills every few thousand requests.
      expect(promoted.length).toBeGreaterThan(5);
      const later = promoted.slice(Math.floor(promoted.length / 2));
      const average = later.reduce((a, b) => a + b, 0) / later.length;
      expect(average).toBeLessThan(64 * 1024);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
