import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { exchangeOf, principalFor, recordAuthentication } from "../src/index.js";

const dist = fileURLToPath(new URL("../dist/", import.meta.url));

describe("exchangeOf", () => {
  it("gives one exchange per request, the same for a framework's wrapper and its raw request", () => {
    const raw = { headers: {} };
    const wrapper = { raw };
    expect(exchangeOf(wrapper)).toBe(exchangeOf(raw));
    expect(exchangeOf({ headers: {} })).not.toBe(exchangeOf(raw));
    expect(exchangeOf(raw)).toMatchObject({
      authentication: undefined,
      client: undefined,
      version: undefined,
      body: undefined,
      rateLimit: undefined,
      idempotencyScope: undefined,
      passages: [],
    });
  });

  it("is shared by the ESM and the CJS build loaded in one process", async () => {
    // An application may import one package and require another: both builds of the kernel then
    // run side by side, and what one step records must reach the step reading through the other.
    if (!existsSync(`${dist}index.cjs`))
      throw new Error("build @svc/kernel first (npx turbo run build --filter=@svc/kernel)");
    const esm = (await import(`${dist}index.js`)) as typeof import("../src/index.js");
    const cjs = createRequire(import.meta.url)(`${dist}index.cjs`) as typeof import("../src/index.js");
    expect(cjs.exchangeOf).not.toBe(esm.exchangeOf);
    const request = { headers: { authorization: "Basic YTpi" } };
    esm.recordAuthentication(request, { id: "alice" });
    expect(cjs.principalFor(request, "test", "")?.id).toBe("alice");
    cjs.exchangeOf(request).passages.push({ fields: { "x-test": "1" } });
    expect(esm.exchangeOf(request).passages).toHaveLength(1);
    expect(exchangeOf(request).authentication?.principal?.id).toBe("alice");
  });

  it("refuses to key a credentialed request nobody authenticated", () => {
    expect(() => principalFor({ headers: { authorization: "Bearer x" } }, "rate limit", "fix")).toThrow(
      /carries credentials/,
    );
    const anonymous = { headers: { authorization: "Bearer x" } };
    recordAuthentication(anonymous, undefined);
    expect(principalFor(anonymous, "rate limit", "fix")).toBeUndefined();
  });
});
