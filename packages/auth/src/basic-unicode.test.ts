import { errorHandler } from "@svc/errors/express";
import { requestState } from "@svc/kernel";
import { createRateLimiter, MemoryStore } from "@svc/ratelimit";
import { type Listening, listen } from "@svc/test-utils";
import express from "express";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createBasicVerifier } from "./basic-verifier.js";
import { authenticate } from "./express.js";
import type { FailureLimiter } from "./failure-budget.js";

// RFC 7617 §2.1 (charset="UTF-8") has the user-id prepared by the PRECIS UsernameCasePreserved
// profile and the password by OpaqueString (RFC 8265 §3.3, §4.2), both of which apply NFC: one
// user's name typed on a keyboard that composes (U+00E9) and on one that does not (e + U+0301)
// is one user-id, and verify must see it spelled one way.
const NFC_USER = "caf\u00e9";
const NFD_USER = "cafe\u0301";
const NFC_PASSWORD = "m\u00f6tley cr\u00fce";
const NFD_PASSWORD = "mo\u0308tley cru\u0308e";
const FULLWIDTH_USER = "\uff43\uff41\uff46\u00e9"; // "ｃａｆé": NFC leaves compatibility characters alone

function basic(user: string, password: string): string {
  return `Basic ${Buffer.from(`${user}:${password}`, "utf8").toString("base64")}`;
}

let server: Listening;
let calls: Array<[string, string]> = [];
const budgetKeys: string[] = [];

/** A user store keyed by the NFC name, compared as exact strings (no normalisation of its own). */
function verify(username: string, password: string) {
  calls.push([username, password]);
  return username === NFC_USER && password === NFC_PASSWORD ? { id: username } : null;
}

beforeAll(async () => {
  const limiter = createRateLimiter({ limit: 100, windowMs: 60_000, store: new MemoryStore() });
  const recording: FailureLimiter = {
    consume(key, cost) {
      if (cost === 1) budgetKeys.push(key);
      return limiter.consume(key, cost);
    },
  };
  const a = express();
  const echo: express.RequestHandler = (req, res) => {
    res.json(requestState(req).principal?.id ?? null);
  };
  a.get("/uncached", authenticate({ realm: "api", basic: { verify, cache: false } }), echo);
  a.get("/cached", authenticate({ realm: "api", basic: { verify } }), echo);
  a.get(
    "/budget",
    authenticate({
      realm: "api",
      basic: { verify, cache: false, failureLimit: { perClient: recording, perUsername: recording } },
    }),
    echo,
  );
  a.use(errorHandler({ logger: { error() {} } }));
  server = await listen(a);
});
afterAll(async () => {
  await server.close();
});
beforeEach(() => {
  calls = [];
  budgetKeys.length = 0;
});

function get(path: string, authorization: string): Promise<Response> {
  return fetch(`${server.url}${path}`, { headers: { authorization } });
}

describe("Basic: user-id and password reach verify in NFC (RFC 7617 §2.1, RFC 8265)", () => {
  it.each<[string, string, string, number, [string, string]]>([
    ["NFC user-id, NFC password", NFC_USER, NFC_PASSWORD, 200, [NFC_USER, NFC_PASSWORD]],
    ["NFD user-id", NFD_USER, NFC_PASSWORD, 200, [NFC_USER, NFC_PASSWORD]],
    ["NFD password", NFC_USER, NFD_PASSWORD, 200, [NFC_USER, NFC_PASSWORD]],
    ["NFD user-id and password", NFD_USER, NFD_PASSWORD, 200, [NFC_USER, NFC_PASSWORD]],
    ["the Angstrom sign (U+212B) is U+00C5 in NFC", "\u212b", "x", 401, ["\u00c5", "x"]],
    ["a different name (no accent) stays different", "cafe", NFC_PASSWORD, 401, ["cafe", NFC_PASSWORD]],
    ["a wrong password in NFD is still wrong", NFD_USER, "mo\u0308tley", 401, [NFC_USER, "m\u00f6tley"]],
    [
      "compatibility characters (fullwidth) are not folded: NFC, not NFKC",
      FULLWIDTH_USER,
      NFC_PASSWORD,
      401,
      [FULLWIDTH_USER, NFC_PASSWORD],
    ],
    ["a colon in the password is kept after normalising", NFD_USER, "e\u0301:x", 401, [NFC_USER, "\u00e9:x"]],
  ])("%s", async (_label, user, password, status, seen) => {
    const res = await get("/uncached", basic(user, password));
    expect(res.status).toBe(status);
    if (status === 200) expect(await res.json()).toBe(NFC_USER);
    else expect(res.headers.get("www-authenticate")).toBe('Basic realm="api", charset="UTF-8"');
    expect(calls).toEqual([seen]);
  });

  it("the NFC and NFD spellings of one credential share one cache entry: verify runs once", async () => {
    expect((await get("/cached", basic(NFC_USER, NFC_PASSWORD))).status).toBe(200);
    expect((await get("/cached", basic(NFD_USER, NFD_PASSWORD))).status).toBe(200);
    expect((await get("/cached", basic(NFC_USER, NFD_PASSWORD))).status).toBe(200);
    expect(calls).toEqual([[NFC_USER, NFC_PASSWORD]]);
    // A wrong password is not served from that entry, in either spelling.
    expect((await get("/cached", basic(NFD_USER, "mo\u0308tley"))).status).toBe(401);
    expect(calls).toHaveLength(2);
  });

  it("failures under either spelling spend the one user-name budget", async () => {
    expect((await get("/budget", basic(NFC_USER, "wrong"))).status).toBe(401);
    expect((await get("/budget", basic(NFD_USER, "wrong"))).status).toBe(401);
    const userKeys = budgetKeys.filter((key) => key.startsWith("u:"));
    expect(userKeys).toHaveLength(2);
    expect(new Set(userKeys).size).toBe(1);
  });

  it("verifier.check() called directly normalises too", async () => {
    const verifier = createBasicVerifier({ verify, cache: false });
    const outcome = await verifier.check({ username: NFD_USER, password: NFD_PASSWORD }, undefined);
    expect(outcome).toMatchObject({ result: "authenticated", principal: { id: NFC_USER } });
    expect(calls).toEqual([[NFC_USER, NFC_PASSWORD]]);
  });
});
