import { createHash, createHmac } from "node:crypto";
import type { Server } from "node:http";
import { join } from "node:path";
import { runInNewContext } from "node:vm";
import { gunzipSync } from "node:zlib";
import { createAdaptorServer } from "@hono/node-server";
import { type Listening, listenOn } from "@svc/test-utils";
import { send } from "@svc/test-utils/conformance";
import { build } from "esbuild";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { conditions } from "./check-fetch-entries.mjs";

/**
 * The Fetch entries, bundled as workerd and browsers resolve them and run where Node.js's
 * globals are not (a `vm` context with the Web platform's globals only: no `process`, no
 * `Buffer`, no `setImmediate`), served through @hono/node-server: a JSON representation coded
 * with gzip (CompressionStream: there is no node:zlib to find), a strong ETag (the portable SHA-1:
 * there is no node:crypto) and a 304 for it, an error record, and authentication (Basic against a
scrypt hash Node.js made, Bearer HS256: Web Crypto and the portable scrypt).
 */
const root = join(import.meta.dirname, "..");
const items = Array.from({ length: 100 }, (_, i) => ({ id: i, name: `item ${i}` }));
const SECRET = "s".repeat(32);
const STORED = "$scrypt$ln=10,r=8,p=1$MDEyMzQ1Njc4OWFiY2RlZg$7AnzIswxwEinpwz+ntydndYfVHPvOACmX9Vvo8hO1qM";

const app = `
import { createPipeline, HttpError } from "@svc/kernel";
import { fetchAdapter } from "@svc/kernel/fetch";
import { compression, representations } from "@svc/negotiate";
import { validators } from "@svc/conditional";
import { withErrors } from "@svc/errors/fetch";
import { verifyPassword } from "@svc/auth";
import { authenticate, authOf } from "@svc/auth/fetch";
const items = ${JSON.stringify(items)};
// Made with Node's scrypt: stored hashes verify where there is none.
const stored = ${JSON.stringify(STORED)};
const auth = authenticate({
  realm: "api",
  bearer: { secret: ${JSON.stringify(SECRET)}, algorithms: ["HS256"] },
  basic: { verify: async (user, password) => user === "alice" && (await verifyPassword(password, stored, { logN: 10 })) ? { id: user } : null },
});
const me = auth.wrap(async (request) => Response.json(authOf(request)?.principal ?? null));
const svc = fetchAdapter(createPipeline({ representations: representations(), coding: compression(), validators: validators() }));
export const fetch = withErrors(async (request) => {
  if (new URL(request.url).pathname === "/items") return svc.respond(request, () => items);
  if (new URL(request.url).pathname === "/me") return me(request);
  throw HttpError.notFound("No such resource");
});
`;

/** Only what a Worker or a browser has: the Web platform's globals, none of Node.js's. */
function webGlobals(): Record<string, unknown> {
  const g = globalThis as Record<string, unknown>;
  const names = [
    "Request",
    "Response",
    "Headers",
    "URL",
    "URLSearchParams",
    "TextEncoder",
    "TextDecoder",
    "Blob",
    "ReadableStream",
    "WritableStream",
    "TransformStream",
    "CompressionStream",
    "DecompressionStream",
    "AbortController",
    "AbortSignal",
    "crypto",
    "btoa",
    "atob",
    "console",
    "setTimeout",
    "clearTimeout",
    "queueMicrotask",
    "structuredClone",
    "WeakRef",
    "FinalizationRegistry",
  ];
  return Object.fromEntries(names.map((name) => [name, g[name]]));
}

let server: Listening;
beforeAll(async () => {
  const bundle = await build({
    stdin: { contents: app, resolveDir: root, loader: "js" },
    absWorkingDir: root,
    bundle: true,
    write: false,
    platform: "browser",
    format: "iife",
    globalName: "app",
    conditions,
    tsconfigRaw: {},
    logLevel: "silent",
    // The packages' sources, as every suite here tests them (scripts/check-fetch-entries.mjs checks
    // the built entries after the build); third-party packages as the Fetch runtimes resolve them.
    plugins: [
      {
        name: "svc-sources",
        setup(b) {
          b.onResolve({ filter: /^@svc\/[a-z-]+(\/[a-z-]+)?$/ }, ({ path }) => {
            const [, name, entry = "index"] = path.split("/");
            return { path: join(root, "packages", name as string, "src", `${entry}.ts`) };
          });
        },
      },
    ],
  });
  const context = webGlobals();
  // One realm, as in a Worker: the bytes TextEncoder makes are the context's own Uint8Array.
  const prelude = `{ const Outer = TextEncoder; globalThis.TextEncoder = class TextEncoder {
    get encoding() { return "utf-8"; }
    encode(text) { return new Uint8Array(new Outer().encode(text)); }
  }; }`;
  const { fetch } = runInNewContext(`${prelude};${bundle.outputFiles[0]?.text};app`, context) as {
    fetch: (request: Request) => Promise<Response>;
  };
  expect(context).not.toHaveProperty("process");
  expect(context).not.toHaveProperty("Buffer");
  server = await listenOn(createAdaptorServer({ fetch }) as Server);
});
afterAll(async () => {
  await server?.close();
});

describe("Fetch entries without Node.js globals, on @hono/node-server", () => {
  it("GET /items, Accept-Encoding: br, gzip → gzip (no br), decodes to the JSON, strong ETag as on Node.js", async () => {
    const res = await send(server.url, { path: "/items", headers: { "accept-encoding": "br, gzip" } });
    expect(res.status).toBe(200);
    expect(res.headers["content-encoding"]).toBe("gzip");
    expect(JSON.parse(gunzipSync(res.body).toString("utf8"))).toEqual(items);
    // The coded response's tag is weak (RFC 9110 §8.8.3); the identity one is strong.
    expect(res.headers.etag).toMatch(/^W\/"/);
    const plain = await send(server.url, { path: "/items" });
    const bytes = Buffer.from(JSON.stringify(items));
    const label = Buffer.from("application/json\n\n");
    const sha1 = createHash("sha1")
      .update(Buffer.concat([label, bytes]))
      .digest("base64")
      .slice(0, 27);
    expect(plain.headers.etag).toBe(`"${bytes.byteLength.toString(16)}-${sha1}"`);
    const revalidated = await send(server.url, {
      path: "/items",
      headers: { "if-none-match": plain.headers.etag as string },
    });
    expect(revalidated.status).toBe(304);
  });

  it("GET /me with Basic (a hash Node's scrypt made), with a Bearer HS256 token, without either → 200, 200, 401", async () => {
    const basic = (text: string) => `Basic ${Buffer.from(text).toString("base64")}`;
    const ok = await send(server.url, {
      path: "/me",
      headers: { authorization: basic("alice:correct horse battery staple") },
    });
    expect(ok.status).toBe(200);
    expect(JSON.parse(ok.body.toString("utf8"))).toMatchObject({ id: "alice" });
    const wrong = await send(server.url, { path: "/me", headers: { authorization: basic("alice:wrong") } });
    expect(wrong.status).toBe(401);
    const part = (value: object) => Buffer.from(JSON.stringify(value)).toString("base64url");
    const signing = `${part({ alg: "HS256" })}.${part({ sub: "bob", exp: Math.floor(Date.now() / 1000) + 60 })}`;
    const token = `${signing}.${createHmac("sha256", SECRET).update(signing).digest("base64url")}`;
    const bearer = await send(server.url, { path: "/me", headers: { authorization: `Bearer ${token}` } });
    expect(bearer.status).toBe(200);
    expect(JSON.parse(bearer.body.toString("utf8"))).toMatchObject({ id: "bob" });
    const none = await send(server.url, { path: "/me" });
    expect(none.status).toBe(401);
    expect(none.headers["www-authenticate"]).toContain("Bearer");
  });

  it("GET /missing → 404 error record", async () => {
    const res = await send(server.url, { path: "/missing", headers: { accept: "application/json" } });
    expect(res.status).toBe(404);
    expect(JSON.parse(res.body.toString("utf8"))).toMatchObject({ status: 404, message: "No such resource" });
  });
});
