// biome-ignore-all assist/source/organizeImports: the README block below keeps its own imports, in its own order
import { assertReadmeShows, type Listening, readmeRegion, whenListening } from "@svc/test-utils";
import { get as httpGet } from "node:http";
import { gunzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

// README "The core on plain node:http": the block below is the README's code, line for line
// (with the package's own source standing in for "@svc/negotiate" and port 0 for 8080).
// #region readme-core
import { createServer } from "node:http";
import { errorHandler } from "@svc/errors/express";
import { createPipeline, reply } from "@svc/kernel";
import { pipelineRequest, writeResponse } from "@svc/kernel/node";
import { compression, representations } from "../src/index.js";
import { crossOrigin, parseBody } from "../src/node.js";

const pipeline = createPipeline({
  representations: representations({ languages: ["en", "de"] }),
  coding: compression({ threshold: 256 }),
});
const cors = crossOrigin({ origins: ["https://app.example"], exposedHeaders: ["Content-Language"] });
const readBody = parseBody({ limit: 64 * 1024, others: "refuse" }); // this server reads nothing else
const handleError = errorHandler();
const employees = Array.from({ length: 20 }, (_, i) => ({ id: i + 1, name: `Employee ${i + 1}` }));

const server = createServer((req, res) => {
  // A 406, a 415 or a serializer's error becomes the error record, negotiated like the success.
  const fail = (err: unknown) => handleError(err, req, res, () => res.destroy());
  const respond = (result: unknown) => {
    const request = pipelineRequest(req, res);
    const prepared = pipeline.prepare(request, req.url ?? "/");
    if (prepared.refusal !== undefined) return fail(prepared.refusal); // 406: no acceptable coding
    pipeline
      .run(request, prepared, () => result)
      .then((value) => writeResponse(res, value, req.method ?? "GET"))
      .catch(fail);
  };
  cors(req, res) // true when it answered (a preflight)
    .then(async (answered) => {
      if (answered) return;
      if (req.method !== "POST") return respond(employees);
      respond(reply(await readBody(req, res), { status: 201 }));
    })
    .catch(fail);
});
server.listen(0);
// #endregion readme-core

let url = "";
let listening: Listening;
beforeAll(async () => {
  listening = await whenListening(server);
  url = listening.url;
});
afterAll(() => listening.close());

/** node:http rather than fetch where the coded bytes themselves are checked. */
function raw(path: string, headers: Record<string, string>) {
  return new Promise<{ headers: Record<string, unknown>; body: Buffer }>((resolve, reject) => {
    httpGet(`${url}${path}`, { headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => resolve({ headers: res.headers, body: Buffer.concat(chunks) }));
    }).on("error", reject);
  });
}

describe("README: the core on plain node:http", () => {
  it("the README shows this file's block", () => {
    const shown = readmeRegion(import.meta.url, [
      ['"../src/index.js"', '"@svc/negotiate"'],
      ['"../src/node.js"', '"@svc/negotiate/node"'],
      ["server.listen(0);", "server.listen(8080);"],
    ]);
    expect(() => assertReadmeShows(import.meta.url, shown)).not.toThrow();
  });

  it("Accept: application/xml, Accept-Language: de → XML in German, Vary on both", async () => {
    const res = await fetch(`${url}/employees`, {
      headers: { accept: "application/xml", "accept-language": "de-AT", "accept-encoding": "identity" },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/xml; charset=utf-8");
    expect(res.headers.get("content-language")).toBe("de");
    expect(res.headers.get("vary")).toBe("Origin, Accept, Accept-Language, Accept-Encoding");
    expect(await res.text()).toContain("<items><item><id>1</id>");
  });

  it("Accept-Encoding: gzip → the JSON gzipped, with the length of the coded bytes", async () => {
    const res = await raw("/employees", { "accept-encoding": "gzip" });
    expect(res.headers["content-encoding"]).toBe("gzip");
    expect(res.headers["content-length"]).toBe(String(res.body.length));
    expect(JSON.parse(gunzipSync(res.body).toString())).toHaveLength(20);
  });

  it("Accept-Encoding: identity;q=0 → 406 error record", async () => {
    const res = await fetch(`${url}/employees`, { headers: { "accept-encoding": "identity;q=0" } });
    expect(res.status).toBe(406);
    expect(res.headers.get("vary")).toContain("Accept-Encoding");
    expect(await res.json()).toMatchObject({ status: 406, path: "/employees" });
  });

  it("Accept: image/png → 406 listing the representations", async () => {
    const res = await fetch(`${url}/employees`, { headers: { accept: "image/png" } });
    expect(res.status).toBe(406);
    expect(((await res.json()) as { message: string }).message).toContain(
      "application/json, application/xml",
    );
  });

  it("POST JSON → 201 with the parsed body; POST text/plain → 415 with Accept-Post", async () => {
    const created = await fetch(`${url}/employees`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ name: "Ada" }),
    });
    expect(created.status).toBe(201);
    expect(await created.json()).toEqual({ name: "Ada" });
    const refused = await fetch(`${url}/employees`, {
      method: "POST",
      headers: { "content-type": "text/plain" },
      body: "Ada",
    });
    expect(refused.status).toBe(415);
    expect(refused.headers.get("accept-post")).toBe("application/json, application/xml");
  });

  it("Origin: https://app.example → CORS headers; another origin → none", async () => {
    const allowed = await fetch(`${url}/employees`, { headers: { origin: "https://app.example" } });
    expect(allowed.headers.get("access-control-allow-origin")).toBe("https://app.example");
    expect(allowed.headers.get("access-control-expose-headers")).toBe(
      "Content-Language,WWW-Authenticate,DPoP-Nonce",
    );
    const other = await fetch(`${url}/employees`, { headers: { origin: "https://evil.example" } });
    expect(other.headers.get("access-control-allow-origin")).toBeNull();
    expect(other.headers.get("vary")).toMatch(/^Origin, /);
  });
});
