import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
// @ts-expect-error: a plain .mjs script without declarations
import { extractBlocks } from "../../../scripts/readme-examples.mjs";

/**
 * What the migration guides say of the packages, held against the code: a guide's block started
 * as it is shown (its `listen` moved to a free port, its undeclared names given) and sent requests,
 * and a guide's sentence about a response compared with the response a real server sends.
 */
const ROOT = resolve(import.meta.dirname, "../../..");
const guide = (name: string) => readFileSync(join(ROOT, "apps/docs/guides", name), "utf8");
interface Block {
  line: number;
  code: string;
  kind: string;
}
const blocks = (name: string): Block[] => extractBlocks(guide(name), name);

const dir = mkdtempSync(join(import.meta.dirname, ".guide-run-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/**
 * A guide's block as a module of its own, imported through vitest (so `@svc/*` are the sources):
 * `head` in front (what the block's prelude only declared), `app.listen(8080...` made
 * `export const server = app.listen(0...`, and each `[from, to]` of `replace` applied.
 */
async function start(block: Block, head: string, replace: [string, string][] = []): Promise<string> {
  let code = block.code.replace(/\bapp\.listen\(8080/, "export const server = app.listen(0");
  for (const [from, to] of replace) code = code.replaceAll(from, to);
  const file = join(dir, `block-${block.line}-${Math.random().toString(36).slice(2)}.ts`);
  writeFileSync(file, `${head}\n${code}\n`);
  const { server } = (await import(file)) as { server: Server };
  if (!server.listening) await new Promise((r) => server.once("listening", r));
  servers.push(server);
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}
const servers: Server[] = [];
afterAll(() => Promise.all(servers.map((s) => new Promise((r) => s.close(r)))));

describe("express-rate-limit.md: the 429 body", () => {
  const text = guide("express-rate-limit.md");
  const bullet = /- \*\*The 429 body\.\*\*([\s\S]*?)\n- /.exec(text)?.[1] ?? "";
  /** The record's members as the bullet lists them: `(`a`, `b`, ...: no `code`)`. */
  const listed = [...(/error record \(([^)]*)\)/.exec(bullet)?.[1] ?? "").matchAll(/`(\w+)`/g)].map(
    (m) => m[1],
  );
  let url: string;
  beforeAll(async () => {
    const after = blocks("express-rate-limit.md").filter((b) => b.kind === "run")[1] as Block;
    expect(after.code).toContain("@svc/ratelimit/express");
    url = await start(after, "");
  });

  const third = async (accept?: string) => {
    const headers = accept === undefined ? {} : { Accept: accept };
    let res: Response | undefined;
    for (let i = 0; i < 3; i++) res = await fetch(`${url}/orders`, { headers });
    return res as Response;
  };

  it("the record the guide lists is the default JSON body of the real 429, member for member", async () => {
    const res = await third();
    expect(res.status).toBe(429);
    const body = (await res.json()) as Record<string, unknown>;
    const said = listed.filter((m) => !/no `code`/.test(bullet) || m !== "code");
    expect(Object.keys(body).sort()).toEqual([...said].sort());
    expect("code" in body).toBe(!/no `code`/.test(bullet));
  });

  it('problem details carry code "rate_limited", as the guide says', async () => {
    expect(bullet).toMatch(/problem details[\s\S]*`code`[\s\S]*`"rate_limited"`/);
    const res = await third("application/problem+json");
    expect(res.status).toBe(429);
    expect(res.headers.get("content-type")).toMatch(/^application\/problem\+json/);
    expect(await res.json()).toMatchObject({ status: 429, code: "rate_limited" });
  });

  it("problem+xml carries the code too", async () => {
    const res = await third("application/problem+xml");
    expect(res.status).toBe(429);
    expect(await res.text()).toMatch(/<code>rate_limited<\/code>/);
  });

  it.each(["fastify-rate-limit.md", "hono-rate-limiter.md", "rate-limiter-flexible.md"])(
    "%s says the record has no code, and problem details do",
    (name) => {
      const said = /\*\*The 429 body\*\*([\s\S]*?)\n- /.exec(guide(name))?.[1] ?? "";
      expect(said).toMatch(/error record[\s\S]*?no `code`[\s\S]*problem details/);
      expect(said).toMatch(/problem details[\s\S]*`code` is\s+`"rate_limited"`/);
    },
  );
});

describe("node-soap.md: the before app serves the guide's own contract", () => {
  const fixture = join(ROOT, "packages/soap-envelope/src/__fixtures__/customer.wsdl");
  const request = (id: string) =>
    '<?xml version="1.0" encoding="UTF-8"?><env:Envelope xmlns:env="http://www.w3.org/2003/05/soap-envelope" xmlns:c="http://svc.example.com/ws/customer/v1"><env:Body>' +
    `<c:GetCustomerRequest><c:customerId>${id}</c:customerId></c:GetCustomerRequest></env:Body></env:Envelope>`;
  const post = (url: string, id: string) =>
    fetch(`${url}/ws/customer`, {
      method: "POST",
      headers: { "Content-Type": 'application/soap+xml; charset=utf-8; action="getCustomer"' },
      body: request(id),
    });
  // The prelude's names, defined: a repository that has every customer, under the id it is asked for.
  const head = [
    "const repo = { async find(id: bigint) { return { id, name: 'Ada', email: 'ada@example.com' }; } };",
    "function verifySecurityHeader(_security: unknown) { return true; }",
  ].join("\n");
  let before: string;
  beforeAll(async () => {
    const [b] = blocks("node-soap.md").filter((x) => x.kind === "fragment") as [Block];
    expect(b.code).toContain('from "soap"');
    before = await start(b, head, [['"contracts/customer.wsdl"', JSON.stringify(fixture)]]);
    // node-soap mounts its route once the WSDL has loaded, after `listen`'s callback returned.
    for (let i = 0; i < 100 && (await fetch(`${before}/ws/customer?wsdl`)).status === 404; i++)
      await new Promise((r) => setTimeout(r, 50));
  }, 60_000);

  it("getCustomer → 200 GetCustomerResponse, not a 'Failed to bind to WSDL' fault", async () => {
    const res = await post(before, "42");
    const text = await res.text();
    expect(text).not.toContain("Failed to bind");
    expect(res.status).toBe(200);
    expect(text).toMatch(/<GetCustomerResponse[\s\S]*<id>42<\/id>/);
  });

  it("xs:long reaches the before app through parseInt, as the guide says: 9007199254740993 → 9007199254740992", async () => {
    expect(guide("node-soap.md")).toContain("`9007199254740993` arriving as `9007199254740992`");
    const text = await (await post(before, "9007199254740993")).text();
    expect(text).toContain("<id>9007199254740992</id>");
  });
});

describe("express-oauth2-jwt-bearer-passport-http.md: bound tokens", () => {
  const rows = guide("express-oauth2-jwt-bearer-passport-http.md")
    .split("\n")
    .filter((l) => l.startsWith("| "));
  it("the `dpop` row names @svc/auth's `dpop`, not 'no equivalent' (the package verifies DPoP proofs)", () => {
    const row = rows.find((l) => l.startsWith("| `dpop`")) ?? "";
    expect(row).toMatch(/\| `dpop: \{/);
    expect(row).not.toMatch(/no equivalent/);
  });
  it("`mtls` stays without an equivalent: no client certificate is checked", () => {
    expect(rows.find((l) => l.startsWith("| `mtls`"))).toMatch(/no equivalent/);
  });
});
