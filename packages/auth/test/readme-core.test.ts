// The README's node:http example (readme-core.ts, the same text) on a real server, checked with fetch.

import { readFileSync } from "node:fs";
import { assertReadmeShows, type Listening, listenOn } from "@svc/test-utils";
import { SignJWT } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { secret, server } from "./readme-core.js";

let url: string;
let listening: Listening;
beforeAll(async () => {
  listening = await listenOn(server);
  url = `${listening.url}/me`;
});
afterAll(() => listening.close());

const get = (authorization?: string) =>
  fetch(url, authorization === undefined ? {} : { headers: { Authorization: authorization } });
const token = (issuer: string) =>
  new SignJWT({ scope: "read write" })
    .setProtectedHeader({ alg: "HS256" })
    .setSubject("grace")
    .setIssuer(issuer)
    .setExpirationTime("5m")
    .sign(new TextEncoder().encode(secret));
const basic = (user: string, password: string) =>
  `Basic ${Buffer.from(`${user}:${password}`).toString("base64")}`;
const CHALLENGES = 'Bearer realm="api", Basic realm="api", charset="UTF-8"';

describe("README: the core from plain node:http", () => {
  it("the README shows exactly the code of readme-core.ts", () => {
    const code = readFileSync(new URL("./readme-core.ts", import.meta.url), "utf8");
    expect(() => assertReadmeShows(import.meta.url, code)).not.toThrow();
  });
  it("a valid Bearer token → 200 with its principal", async () => {
    const res = await get(`Bearer ${await token("https://issuer.example/")}`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({
      id: "grace",
      issuer: "https://issuer.example/",
      roles: [],
      scopes: ["read", "write"],
      scheme: "bearer",
    });
  });
  it("a token of another issuer → 401 with both challenges", async () => {
    const res = await get(`bearer ${await token("https://elsewhere.example/")}`);
    expect(res.status).toBe(401);
    expect(res.headers.get("www-authenticate")).toBe(CHALLENGES);
  });
  it("good Basic credentials → 200 with the verify callback's principal", async () => {
    const res = await get(basic("ada", "lovelace"));
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ id: "ada", roles: [], scopes: ["read"], scheme: "basic" });
  });
  it("a wrong password, no credentials, an unknown scheme → 401 with both challenges", async () => {
    for (const authorization of [basic("ada", "babbage"), undefined, "Digest x"]) {
      const res = await get(authorization);
      expect(res.status).toBe(401);
      expect(res.headers.get("www-authenticate")).toBe(CHALLENGES);
    }
  });
});
