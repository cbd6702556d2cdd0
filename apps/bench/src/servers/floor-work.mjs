// What the floor servers (svc-floor, readme-floor) do a request that no decision avoids: the
// Bearer token looked up in a verified-token cache by its SHA-256 (the cache holds no token, as
// @svc/auth's is keyed), verified with jose on a miss, and one fixed-window rate-limit counter per
// principal, as an in-memory store keeps them, its fields written as @svc/ratelimit writes them.
import { hash } from "node:crypto";
import { jwtVerify } from "jose";
import { benchVerificationKey, JWT_AUDIENCE, JWT_ISSUER } from "../fixtures.mjs";

const LIMIT = 1_000_000;

/** The floor's principal check and rate-limit fields, for the bench's verification key. */
export async function floorWork() {
  const key = await benchVerificationKey();
  const verified = new Map();
  const counters = new Map();
  return {
    /** The token's subject: from the cache, else verified (ES256, issuer and audience). */
    async subject(authorization) {
      const cacheKey = hash("sha256", authorization.slice(7), "base64url");
      let subject = verified.get(cacheKey);
      if (subject === undefined) {
        const { payload } = await jwtVerify(authorization.slice(7), key, {
          issuer: JWT_ISSUER,
          audience: JWT_AUDIENCE,
        });
        subject = String(payload.sub);
        verified.set(cacheKey, subject);
      }
      return subject;
    },
    /** Counts one request of `subject` and sets the five rate-limit fields on `res`. */
    count(subject, res) {
      const now = Date.now();
      let counter = counters.get(subject);
      if (counter === undefined || counter.resetAt <= now) {
        counter = { count: 0, resetAt: now + 1000 };
        counters.set(subject, counter);
      }
      const remaining = LIMIT - ++counter.count;
      const reset = Math.ceil((counter.resetAt - now) / 1000);
      res.setHeader("X-RateLimit-Limit", String(LIMIT));
      res.setHeader("X-RateLimit-Remaining", String(remaining));
      res.setHeader("X-RateLimit-Reset", String(Math.ceil(counter.resetAt / 1000)));
      res.setHeader("RateLimit-Policy", `"default";q=${LIMIT};w=1`);
      res.setHeader("RateLimit", `"default";r=${remaining};t=${reset}`);
    },
  };
}
