import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath, pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { exchangeOf, principalFor, recordAuthentication } from "../src/index.js";

const dist = fileURLToPath(new URL("../dist/", import.meta.url));

describe("exchangeOf", () => {
  it("keeps the exchange of a request that takes no new property (frozen, sealed), with no property added", () => {
    const frozen = Object.freeze({ headers: {} });
    const sealed = Object.seal({ headers: {} });
    const other = { headers: {} };
    for (const request of [frozen, sealed]) {
      const exchange = exchangeOf(request);
      exchangeOf(other);
      expect(exchangeOf(request)).toBe(exchange);
      expect(Object.getOwnPropertySymbols(request)).toEqual([]);
    }
    expect(exchangeOf(frozen)).not.toBe(exchangeOf(sealed));
    expect(Object.getOwnPropertySymbols(other)).toHaveLength(1);
  });

  it("gives one exchange per request, the same for a framework's wrapper and its raw request", () => {
    const raw = { headers: {} };
    const wrapper = { raw };
    expect(exchangeOf(wrapper)).toBe(exchangeOf(raw));
    expect(exchangeOf({ headers: {} })).not.toBe(exchangeOf(raw));
    expect(exchangeOf(raw)).toMatchObject({
      authentication: undefined,
      version: undefined,
      body: undefined,
      rateLimit: undefined,
      idempotencyScope: undefined,
      passages: [],
    });
  });

  it("is shared by the ESM and the CJS build loaded in one process", () => {
    // An application may import one package and require another: what one step records through
    // `import` must reach the step reading through `require`. Run in a plain Node.js process, as
    // an application loads the built files (not through this runner's module graph).
    if (!existsSync(`${dist}index.cjs`))
      throw new Error("build @svc/kernel first (npx turbo run build --filter=@svc/kernel)");
    const script = `
      import { createRequire } from "node:module";
      const esm = await import(${JSON.stringify(pathToFileURL(`${dist}index.js`).href)});
      const cjs = createRequire(import.meta.url)(${JSON.stringify(`${dist}index.cjs`)});
      const request = { headers: { authorization: "Basic YTpi" } };
      esm.recordAuthentication(request, { id: "alice" });
      cjs.exchangeOf(request).passages.push({ fields: { "x-test": "1" } });
      process.stdout.write(JSON.stringify([cjs.principalFor(request, "test", "")?.id, esm.exchangeOf(request).passages.length]));
    `;
    const out = execFileSync(process.execPath, ["--input-type=module", "-e", script], { encoding: "utf8" });
    expect(JSON.parse(out)).toEqual(["alice", 1]);
  });

  it("a decision published through @svc/kernel/internal reaches a subscriber of @svc/kernel and the request's exchange, on a runtime without node:diagnostics_channel", () => {
    // A runtime without that module (no process.getBuiltinModule) has the kernel's own channels:
    // one set per process, whichever entry publishes and whichever subscribes, as the exchanges.
    const script = `
      delete process.getBuiltinModule;
      const main = await import(${JSON.stringify(pathToFileURL(`${dist}index.js`).href)});
      const internal = await import(${JSON.stringify(pathToFileURL(`${dist}internal.js`).href)});
      const heard = [];
      main.subscribeDiagnostics("svc:test", (message) => heard.push(message.decision));
      const channel = internal.decisionChannel("svc:test");
      const request = { headers: {} };
      main.exchangeOf(request);
      if (channel.hasSubscribers) internal.publishDecision(channel, { request, decision: "limited" });
      const kept = main.exchangeOf(request).decisions.map((d) => d.channel + " " + d.message.decision);
      process.stdout.write(JSON.stringify([heard, kept]));
    `;
    const out = execFileSync(process.execPath, ["--input-type=module", "-e", script], { encoding: "utf8" });
    expect(JSON.parse(out)).toEqual([["limited"], ["svc:test limited"]]);
  });

  it("refuses to key a credentialed request nobody authenticated", () => {
    expect(() => principalFor({ headers: { authorization: "Bearer x" } }, "rate limit", "fix")).toThrow(
      /carries credentials/,
    );
    const anonymous = { headers: { authorization: "Bearer x" } };
    recordAuthentication(anonymous, undefined);
    expect(principalFor(anonymous, "rate limit", "fix")).toBeUndefined();
  });

  it("a principal left on the request without recordAuthentication → 500, never its id", () => {
    const left = { headers: {}, principal: { id: "mallory" } };
    expect(() => principalFor(left, "rate limit", "fix")).toThrow(/recordAuthentication/);
    recordAuthentication(left, { id: "alice" });
    expect(principalFor(left, "rate limit", "fix")?.id).toBe("alice");
  });

  it("Fastify's undecorated principal (null) and no credentials → anonymous", () => {
    expect(principalFor({ headers: {}, principal: null }, "rate limit", "fix")).toBeUndefined();
  });
});
