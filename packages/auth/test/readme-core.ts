import { createServer } from "node:http";
import {
  challenge,
  createBasicVerifier,
  createBearerVerifier,
  decodeBasicCredentials,
  InvalidTokenError,
  type Principal,
  parseAuthorization,
} from "@svc/auth";

export const secret = "a shared HS256 secret, 32 bytes or more";
// Built once: the algorithm allow-list, the key and the verified-token cache.
const bearer = createBearerVerifier({ algorithms: ["HS256"], secret, issuer: "https://issuer.example/" });
// Built once: failure budgets (with failureLimit), the verified-credentials cache, bounded hashing.
const basic = createBasicVerifier({
  verify: (username, password) =>
    username === "ada" && password === "lovelace" ? { id: "ada", scopes: ["read"] } : null,
});
// RFC 9110 §11.6.1: a 401 names every scheme the resource accepts.
const challenges = `${challenge("Bearer", { realm: "api" })}, ${challenge("Basic", { realm: "api", charset: "UTF-8" })}`;

export const server = createServer(async (req, res) => {
  const authorization = parseAuthorization(req.headers.authorization); // scheme lower-cased
  let principal: Principal | undefined;
  if (authorization?.scheme === "bearer") {
    principal = await bearer.verify(authorization.credentials).catch((err: unknown) => {
      if (err instanceof InvalidTokenError) return undefined; // err.reason is for the log only
      throw err;
    });
  } else if (authorization?.scheme === "basic") {
    const credentials = decodeBasicCredentials(authorization.credentials);
    const outcome = await basic.check(credentials, basic.clientAddress(req));
    if (outcome.result === "blocked" || outcome.result === "busy") {
      // RFC 6585 §4 (failure budget spent) / RFC 9110 §15.6.4 (hashing saturated): not judged.
      const retryAfter = String(Math.max(1, Math.ceil(outcome.retryAfterMs / 1000)));
      res.writeHead(outcome.result === "blocked" ? 429 : 503, { "Retry-After": retryAfter }).end();
      return;
    }
    if (outcome.result === "authenticated") principal = outcome.principal;
  }
  if (principal === undefined) {
    res.writeHead(401, { "WWW-Authenticate": challenges }).end();
    return;
  }
  res.writeHead(200, { "Content-Type": "application/json" }).end(JSON.stringify(principal));
});
