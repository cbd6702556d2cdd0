import { createServer } from "node:http";
import { type Listening, listenOn } from "@svc/test-utils";
import { afterEach, describe, expect, it } from "vitest";
import { app } from "../test/helpers.js";
import { type BearerOptions, createBearerVerifier } from "./bearer.js";
import { authenticate } from "./express.js";
import { createTokenIssuer } from "./token-issuer.js";

const ISS = "https://issuer.test/";
const AUD = "https://api.test/";
const issuer = createTokenIssuer({ issuer: ISS, audience: AUD, kid: "a" });

const opened: Listening[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((l) => l.close()));
});

/** A key server on node:http counting its downloads, and a server verifying tokens with its keys. */
async function setup(options: Pick<BearerOptions, "jwksOptions" | "cache">) {
  const keys = JSON.stringify(await issuer.jwks());
  const state = { downloads: 0 };
  const keyServer = await listenOn(
    createServer((_req, res) => {
      state.downloads++;
      res.writeHead(200, { "content-type": "application/json" }).end(keys);
    }),
  );
  opened.push(keyServer);
  const bearer = createBearerVerifier({
    jwksUri: `${keyServer.url}/jwks.json`,
    allowHttp: true,
    onWarning: () => {},
    algorithms: ["ES256"],
    issuer: ISS,
    audience: AUD,
    ...options,
  });
  const server = await listenOn(createServer(app(authenticate({ realm: "api", bearer }))));
  opened.push(server);
  const get = async (token: string) =>
    (await fetch(`${server.url}/me`, { headers: { authorization: `Bearer ${token}` } })).status;
  return { state, get };
}

let serial = 0;
const fresh = async () => (await issuer.issue({ id: `u${serial++}` })).access_token;

describe("jwksOptions.cacheMaxAge: 0 keeps no key set: one download per verification", () => {
  it("cacheMaxAge 0: three new tokens → 200 each, three downloads; a token seen before → the verified-token cache, no download", async () => {
    const { state, get } = await setup({ jwksOptions: { cacheMaxAge: 0 } });
    const first = await fresh();
    for (const token of [first, await fresh(), await fresh()]) expect(await get(token)).toBe(200);
    expect(state.downloads).toBe(3);
    expect(await get(first)).toBe(200);
    expect(state.downloads).toBe(3);
  });

  it("cacheMaxAge 0 and cache: false: every request downloads the key set", async () => {
    const { state, get } = await setup({ jwksOptions: { cacheMaxAge: 0 }, cache: false });
    const token = await fresh();
    for (let i = 0; i < 3; i++) expect(await get(token)).toBe(200);
    expect(state.downloads).toBe(3);
  });

  it("a forged signature still costs a download with cacheMaxAge 0 (→ 401), none with the default", async () => {
    const forged = (token: string) => `${token.slice(0, -4)}${token.endsWith("AAAA") ? "BBBA" : "AAAA"}`;
    const zero = await setup({ jwksOptions: { cacheMaxAge: 0 } });
    expect(await zero.get(await fresh())).toBe(200);
    expect(await zero.get(forged(await fresh()))).toBe(401);
    expect(zero.state.downloads).toBe(2);
    const byDefault = await setup({});
    expect(await byDefault.get(await fresh())).toBe(200);
    expect(await byDefault.get(forged(await fresh()))).toBe(401);
    expect(byDefault.state.downloads).toBe(1);
  });

  it("the default (10 minutes): three new tokens → one download", async () => {
    const { state, get } = await setup({});
    for (let i = 0; i < 3; i++) expect(await get(await fresh())).toBe(200);
    expect(state.downloads).toBe(1);
  });
});
