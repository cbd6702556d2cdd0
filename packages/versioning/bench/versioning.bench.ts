// Added cost per request of resolving the version: the pure core, and a real listening server with
// no versioning, with @svc/versioning (header, the pipeline's prepare) and with express-version-request (header), called
// with fetch over keep-alive. The server figures include the loopback round trip.
// Run: npx vitest bench --run --project @svc/versioning

import { createPipeline } from "@svc/kernel";
import { expressAdapter } from "@svc/kernel/express";
import { listen } from "@svc/test-utils";
import express from "express";
import versionRequest from "express-version-request";
import { afterAll, bench, describe } from "vitest";
import { versionResolver, versions } from "../src/index.js";

const options = { versions: [1, 2, 3], defaultVersion: 1, mediaType: { vendor: "svc" } };

function app(mw?: express.RequestHandler) {
  const a = express();
  if (mw) a.use(mw);
  a.get("/employees", (_req, res) => {
    res.json({ ok: true });
  });
  return a;
}

const plain = await listen(app());
const ours = await listen(
  app(expressAdapter(createPipeline({ versioning: versions(options) })).prepare as express.RequestHandler),
);
const peer = await listen(app(versionRequest.setVersionByHeader("API-Version")));
afterAll(async () => {
  await Promise.all([plain.close(), ours.close(), peer.close()]);
});

async function call(url: string): Promise<void> {
  const res = await fetch(`${url}/employees`, { headers: { "API-Version": "2" } });
  await res.arrayBuffer();
  if (res.status !== 200) throw new Error(`unexpected ${res.status}`);
}

describe("resolve the version (pure core)", () => {
  const headers = { accept: "application/vnd.svc.v2+json, application/json;q=0.5", "api-version": "2" };
  const resolveVersion = versionResolver(options);
  bench("versionResolver: header + media type", () => {
    resolveVersion("/employees?page=2", headers);
  });
  const step = versions(options);
  const request = { method: "GET", headers, path: "/employees" };
  bench("versions().resolve, the pipeline step: header + media type", () => {
    step.resolve(request, "/employees?page=2");
  });
});

describe("GET /employees with API-Version: 2 over a real server", () => {
  bench("no versioning", async () => {
    await call(plain.url);
  });
  bench("@svc/versioning", async () => {
    await call(ours.url);
  });
  bench("express-version-request", async () => {
    await call(peer.url);
  });
});
