import { principalKey } from "@svc/kernel";
import { type Listening, listen } from "@svc/test-utils";
import { SignJWT } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { app } from "../test/helpers.js";
import { authenticate } from "./express.js";
import type { Principal } from "./principal.js";

const SELF = "urn:example:api";
const OTHER = "https://other.example/";
const secret = new TextEncoder().encode("an HMAC secret of at least thirty-two bytes!");
const token = (iss: string | undefined, sub: string) => {
  const jwt = new SignJWT({}).setProtectedHeader({ alg: "HS256" }).setSubject(sub).setExpirationTime("5m");
  return (iss === undefined ? jwt : jwt.setIssuer(iss)).sign(secret);
};
const basic = (user: string) => `Basic ${Buffer.from(`${user}:pw`).toString("base64")}`;

let server: Listening;
beforeAll(async () => {
  server = await listen(
    app(
      authenticate({
        realm: "api",
        bearer: { secret, algorithms: ["HS256"] },
        basic: {
          // alice's Basic credentials and the API's own tokens name one user; carol is local.
          verify: (user, password) =>
            password !== "pw" ? null : user === "alice" ? { id: user, issuer: SELF } : { id: user },
        },
      }),
    ),
  );
});
afterAll(() => server.close());

async function me(authorization: string): Promise<Principal> {
  const res = await fetch(`${server.url}/me`, { headers: { authorization } });
  expect(res.status).toBe(200);
  return (await res.json()) as Principal;
}

describe("the principal's issuer", () => {
  it("Bearer with iss → the principal names it", async () => {
    expect(await me(`Bearer ${await token(OTHER, "alice")}`)).toMatchObject({ id: "alice", issuer: OTHER });
  });

  it("Bearer without iss → no issuer", async () => {
    expect((await me(`Bearer ${await token(undefined, "alice")}`)).issuer).toBeUndefined();
  });

  it("Basic, verify naming the API's own issuer → the same key as that issuer's token for alice", async () => {
    const byBasic = await me(basic("alice"));
    const byToken = await me(`Bearer ${await token(SELF, "alice")}`);
    expect(byBasic).toMatchObject({ id: "alice", issuer: SELF, scheme: "basic" });
    expect(principalKey(byBasic)).toBe(principalKey(byToken));
    expect(principalKey(byBasic)).not.toBe(principalKey(await me(`Bearer ${await token(OTHER, "alice")}`)));
  });

  it("Basic, verify naming no issuer → the id alone, apart from every issuer's alice", async () => {
    const carol = await me(basic("carol"));
    expect(carol.issuer).toBeUndefined();
    expect(principalKey(carol)).toBe("carol");
    expect(principalKey(await me(`Bearer ${await token(OTHER, "carol")}`))).not.toBe("carol");
  });

  it("a mapping that names an issuer does not replace the token's iss", async () => {
    const mapped = await listen(
      app(
        authenticate({
          realm: "api",
          bearer: {
            secret,
            algorithms: ["HS256"],
            principal: (claims) => ({ id: String(claims.sub), issuer: SELF }),
          },
        }),
      ),
    );
    try {
      const res = await fetch(`${mapped.url}/me`, {
        headers: { authorization: `Bearer ${await token(OTHER, "alice")}` },
      });
      expect(((await res.json()) as Principal).issuer).toBe(OTHER);
    } finally {
      await mapped.close();
    }
  });
});
