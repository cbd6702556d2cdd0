import { readFileSync } from "node:fs";
import { errorHandler } from "@svc/errors/express";
import { requestState } from "@svc/kernel";
import { type Listening, listen } from "@svc/test-utils";
import express from "express";
import { exportJWK, generateKeyPair, SignJWT } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { authenticate } from "../src/express.js";

/**
 * What the README's "Coming from express-oauth2-jwt-bearer" says of the peer's `strict` option
 * (RFC 9068 `typ: at+jwt`), held against the code: `bearer.typ` is the equivalent, and it refuses
 * a token of another type on a real server.
 * @see https://www.rfc-editor.org/rfc/rfc9068#section-4
 */
const readme = readFileSync(new URL("../README.md", import.meta.url), "utf8");
const from = readme.indexOf("## Coming from express-oauth2-jwt-bearer");
const migration = readme.slice(from, readme.indexOf("\n## ", from + 1));
/** The paragraph (bullet) of the section that names `strict`. */
const strictLine = migration.split(/\n(?=- |\| )/).find((p) => p.includes("`strict`")) ?? "";

const ISSUER = "https://issuer.example/";
const AUDIENCE = "https://api.example/";
const keys = await generateKeyPair("ES256");
const jwks = { keys: [{ ...(await exportJWK(keys.publicKey)), kid: "k1", alg: "ES256" }] };
const token = (typ: string | undefined) =>
  new SignJWT({ scope: "read" })
    .setProtectedHeader(typ === undefined ? { alg: "ES256", kid: "k1" } : { alg: "ES256", kid: "k1", typ })
    .setSubject("alice")
    .setIssuer(ISSUER)
    .setAudience(AUDIENCE)
    .setIssuedAt()
    .setExpirationTime("5m")
    .sign(keys.privateKey);

describe("README: coming from express-oauth2-jwt-bearer, `strict`", () => {
  it('names `bearer.typ: "at+jwt"` as its equivalent, not as something not offered', () => {
    expect(strictLine).toContain('`bearer.typ: "at+jwt"`');
    expect(strictLine).not.toMatch(/not offered[^.]*`strict`|`strict`[^.]*not offered/i);
  });

  it("the options table documents `typ`", () => {
    expect(readme).toMatch(/^\| `typ` \| .*"at\+jwt"/m);
  });

  describe('bearer.typ: "at+jwt" on a real server', () => {
    let server: Listening;
    beforeAll(async () => {
      const app = express();
      app.disable("x-powered-by");
      app.use(
        authenticate({
          realm: "api",
          bearer: { jwks, algorithms: ["ES256"], issuer: ISSUER, audience: AUDIENCE, typ: "at+jwt" },
        }),
      );
      app.get("/me", (req, res) => {
        res.json({ id: requestState(req).principal?.id });
      });
      app.use(errorHandler({ logger: { error() {} } }));
      server = await listen(app);
    });
    afterAll(() => server.close());

    it.each([
      ["at+jwt", 200],
      ["application/at+jwt", 200],
      ["JWT", 401],
      [undefined, 401],
    ] as const)("a token with typ %s → %i", async (typ, status) => {
      const res = await fetch(`${server.url}/me`, {
        headers: { Authorization: `Bearer ${await token(typ)}` },
      });
      expect(res.status).toBe(status);
    });
  });
});
