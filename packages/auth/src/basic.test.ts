import { request } from "node:http";
import { requestState } from "@svc/kernel";
import { type Listening, listen } from "@svc/test-utils";
import express from "express";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { app } from "../test/helpers.js";
import { decodeBasicCredentials } from "./basic.js";
import { authenticate } from "./express.js";
import { hashPassword, verifyPassword } from "./password-hash.js";

const realm = "api";
const users = new Map<string, { hash: string; roles: string[] }>();
let server: Listening;
let calls: Array<[string, string]> = [];

function basic(user: string, password: string): string {
  return `Basic ${Buffer.from(`${user}:${password}`, "utf8").toString("base64")}`;
}
function get(authorization?: string): Promise<Response> {
  return fetch(`${server.url}/me`, { headers: authorization === undefined ? {} : { authorization } });
}

beforeAll(async () => {
  // Low scrypt cost keeps the suite fast; the format and the comparison are what is under test.
  users.set("alice", { hash: await hashPassword("pa:ss:word", { logN: 10 }), roles: ["admin"] });
  users.set("jürgen", { hash: await hashPassword("grüße", { logN: 10 }), roles: [] });
  const auth = authenticate({
    realm,
    basic: {
      async verify(username, password) {
        calls.push([username, password]);
        if (username === "boom") throw new Error("user store down");
        const user = users.get(username);
        if (!(await verifyPassword(password, user?.hash))) return null;
        return { id: username, roles: user?.roles ?? [] };
      },
    },
  });
  const a = express();
  // The handler sees what the client sent: the query and form body, next to who sent it.
  a.get("/echo", auth, (req, res) => {
    res.json({ principal: requestState(req).principal?.id ?? null, query: req.query });
  });
  a.post("/echo", express.urlencoded({ extended: false }), auth, (req, res) => {
    res.json({ principal: requestState(req).principal?.id ?? null, body: req.body });
  });
  a.use(app(auth));
  server = await listen(a);
});
afterAll(async () => {
  await server.close();
});

describe("Basic", () => {
  it("a password with ':' in it → 200; the first colon splits (RFC 7617 §2)", async () => {
    calls = [];
    const res = await get(basic("alice", "pa:ss:word"));
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ id: "alice", roles: ["admin"], scopes: [], scheme: "basic" });
    expect(calls).toEqual([["alice", "pa:ss:word"]]);
  });

  it("UTF-8 user name and password → 200", async () => {
    expect((await get(basic("jürgen", "grüße"))).status).toBe(200);
  });

  it("a wrong password → 401 with the Basic challenge and charset", async () => {
    const res = await get(basic("alice", "pa:ss"));
    expect(res.status).toBe(401);
    expect(res.headers.get("www-authenticate")).toBe('Basic realm="api", charset="UTF-8"');
  });

  it("an unknown user → 401", async () => {
    expect((await get(basic("mallory", "x"))).status).toBe(401);
  });

  it("no credentials → 401 with the Basic challenge only", async () => {
    const res = await get();
    expect(res.status).toBe(401);
    expect(res.headers.get("www-authenticate")).toBe('Basic realm="api", charset="UTF-8"');
  });

  it("scheme in any case (bAsIc) → 200", async () => {
    expect((await get(basic("alice", "pa:ss:word").replace("Basic", "bAsIc"))).status).toBe(200);
  });

  it("`Basic !!!` → 401, verify never called", async () => {
    calls = [];
    expect((await get("Basic !!!")).status).toBe(401);
    expect(calls).toEqual([]);
  });

  it("`Basic` alone → 401", async () => {
    expect((await get("Basic")).status).toBe(401);
  });

  it("base64 without a colon → 401", async () => {
    expect((await get(`Basic ${Buffer.from("alice").toString("base64")}`)).status).toBe(401);
  });

  it("base64 of bytes that are not UTF-8 (0xff 0x3a 0x61) → 401, verify never called", async () => {
    calls = [];
    expect((await get(`Basic ${Buffer.from([0xff, 0x3a, 0x61]).toString("base64")}`)).status).toBe(401);
    expect(calls).toEqual([]);
  });

  it("a UTF-8 byte order mark before the user-id is part of it, not dropped → 401 (RFC 3629 §6)", async () => {
    calls = [];
    const bom = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from("alice:pa:ss:word", "utf8")]);
    expect((await get(`Basic ${bom.toString("base64")}`)).status).toBe(401);
    expect(calls).toEqual([["\ufeffalice", "pa:ss:word"]]);
    expect(decodeBasicCredentials(bom.toString("base64"))).toEqual({
      username: "\ufeffalice",
      password: "pa:ss:word",
    });
  });

  it("a raw Latin-1 byte in the header (0xe9) → 401, not 500", async () => {
    const status = await new Promise<number>((resolve, reject) => {
      const req = request(`${server.url}/me`, { headers: { authorization: "Basic YWxp\u00e9" } }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on("error", reject);
      req.end();
    });
    expect(status).toBe(401);
  });

  it("a Bearer token when only Basic is enabled → 401 with the Basic challenge", async () => {
    const res = await get("Bearer abc.def.ghi");
    expect(res.status).toBe(401);
    expect(res.headers.get("www-authenticate")).toBe('Basic realm="api", charset="UTF-8"');
  });

  // RFC 6750 §2.2/§2.3 constrain a resource server that accepts bearer tokens; with Bearer off,
  // `access_token` is the resource's own data (a third-party token, a search term) and passes.
  it("?access_token=... when only Basic is enabled → 200, the parameter reaches the handler as data", async () => {
    const res = await fetch(`${server.url}/echo?access_token=abc&page=2`, {
      headers: { authorization: basic("alice", "pa:ss:word") },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("www-authenticate")).toBeNull();
    expect(await res.json()).toEqual({ principal: "alice", query: { access_token: "abc", page: "2" } });
  });

  it.each(["access%5Ftoken", "ACCESS_TOKEN", "access_token[]"])(
    "?%s=... when only Basic is enabled → 200",
    async (name) => {
      const res = await fetch(`${server.url}/echo?${name}=abc`, {
        headers: { authorization: basic("alice", "pa:ss:word") },
      });
      expect(res.status).toBe(200);
    },
  );

  it("access_token in a form body when only Basic is enabled → 200, the field reaches the handler", async () => {
    const res = await fetch(`${server.url}/echo`, {
      method: "POST",
      headers: {
        authorization: basic("alice", "pa:ss:word"),
        "content-type": "application/x-www-form-urlencoded",
      },
      body: "access_token=abc",
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ principal: "alice", body: { access_token: "abc" } });
  });

  it("?access_token=... when only Basic is enabled still needs Basic credentials → 401 with the Basic challenge", async () => {
    const res = await fetch(`${server.url}/echo?access_token=abc`);
    expect(res.status).toBe(401);
    expect(res.headers.get("www-authenticate")).toBe('Basic realm="api", charset="UTF-8"');
  });

  it("two Authorization lines when only Basic is enabled → 400 without a Bearer challenge", async () => {
    const answer = await new Promise<{ status: number; challenge: string | undefined }>((resolve, reject) => {
      const req = request(`${server.url}/me`, (res) => {
        res.resume();
        resolve({ status: res.statusCode ?? 0, challenge: res.headers["www-authenticate"] });
      });
      req.setHeader("Authorization", [basic("alice", "pa:ss:word"), basic("bob", "x")]);
      req.on("error", reject);
      req.end();
    });
    expect(answer).toEqual({ status: 400, challenge: undefined });
  });

  it("verify throws (user store down) → 500, not 401", async () => {
    expect((await get(basic("boom", "x"))).status).toBe(500);
  });
});

describe("decodeBasicCredentials", () => {
  it.each([
    ["dXNlcjpwYXNz", { username: "user", password: "pass" }],
    ["dXNlcjo=", { username: "user", password: "" }],
    ["OnBhc3M=", { username: "", password: "pass" }],
  ])("%s → %j", (input, expected) => {
    expect(decodeBasicCredentials(input)).toEqual(expected);
  });

  it.each(["", "!!!", "dXNlcg", "dXNl cjpw", "dXNlcjpw\u00e9", Buffer.from("a:\u0000b").toString("base64")])(
    "%j → undefined",
    (input) => {
      expect(decodeBasicCredentials(input)).toBeUndefined();
    },
  );
});

describe("hashPassword / verifyPassword", () => {
  it("the right password → true, a wrong one → false", async () => {
    const stored = await hashPassword("s3cret", { logN: 10 });
    expect(stored).toMatch(/^\$scrypt\$ln=10,r=8,p=1\$[A-Za-z0-9+/]+\$[A-Za-z0-9+/]+$/);
    expect(await verifyPassword("s3cret", stored)).toBe(true);
    expect(await verifyPassword("s3cret ", stored)).toBe(false);
  });

  it("two hashes of one password differ (random salt)", async () => {
    expect(await hashPassword("x", { logN: 10 })).not.toBe(await hashPassword("x", { logN: 10 }));
  });

  it("an unknown user (undefined hash) or a malformed hash → false", async () => {
    expect(await verifyPassword("x", undefined)).toBe(false);
    expect(await verifyPassword("x", "plaintext")).toBe(false);
    expect(await verifyPassword("x", "$scrypt$ln=99,r=8,p=1$AAAA$AAAA")).toBe(false);
  });

  it("NFC and NFD spellings of one password match", async () => {
    const stored = await hashPassword("caf\u00e9", { logN: 10 });
    expect(await verifyPassword("cafe\u0301", stored)).toBe(true);
  });
});
