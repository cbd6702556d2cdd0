// The README's node:http example (readme-core.ts, the same text) on a real server, checked with fetch.

import { readFileSync } from "node:fs";
import { assertReadmeShows, type Listening, listenOn } from "@svc/test-utils";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { server } from "./readme-core.js";

let base: string;
let listening: Listening;
beforeAll(async () => {
  listening = await listenOn(server);
  base = `${listening.url}`;
});
afterAll(() => listening.close());

const xml = { accept: "application/xml" };
const get = async (headers: Record<string, string> = {}) => fetch(`${base}/doc`, { headers });
const put = (body: unknown, headers: Record<string, string>) =>
  fetch(`${base}/doc`, { method: "PUT", headers, body: JSON.stringify(body) });

describe("README: the core from plain node:http", () => {
  it("the README shows exactly the code of readme-core.ts", () => {
    const code = readFileSync(new URL("./readme-core.ts", import.meta.url), "utf8");
    expect(() => assertReadmeShows(import.meta.url, code)).not.toThrow();
  });

  it("GET → a strong tag per representation; If-None-Match with it → 304", async () => {
    const json = await get();
    const asXml = await get(xml);
    const tag = json.headers.get("etag") ?? "";
    expect(tag).toMatch(/^"/);
    expect(asXml.headers.get("etag")).toMatch(/^"/);
    expect(asXml.headers.get("etag")).not.toBe(tag);
    const again = await get({ "if-none-match": tag, "cache-control": "max-age=0" });
    expect(again.status).toBe(304);
    expect(await again.text()).toBe("");
  });

  it("PUT with the XML tag in If-Match → 200; with it again, now stale → 412 with the current tag", async () => {
    const tag = (await get(xml)).headers.get("etag") ?? "";
    const ok = await put({ id: 1, name: "Grace" }, { "if-match": tag });
    expect(ok.status).toBe(200);
    const stale = await put({ id: 1, name: "Edsger" }, { "if-match": tag });
    expect(stale.status).toBe(412);
    expect(stale.headers.get("etag")).toBe((await get()).headers.get("etag"));
    expect(await (await get()).json()).toEqual({ id: 1, name: "Grace" });
  });

  it("PUT with the JSON tag → 200; without a precondition → 200", async () => {
    const tag = (await get()).headers.get("etag") ?? "";
    expect((await put({ id: 1, name: "Barbara" }, { "if-match": tag })).status).toBe(200);
    expect((await put({ id: 1, name: "Ada" }, {})).status).toBe(200);
  });
});
