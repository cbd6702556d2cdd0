// Data and credentials shared by the harness and the baseline servers, so every server answers
// the same request with the same representation.

import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { exportJWK, generateKeyPair, importJWK, jwtVerify, SignJWT } from "jose";

/** The employee every `GET /employees/{id}` scenario asks for. */
export const EMPLOYEE_ID = 42;

/** The same record the baselines serve; the reference server serves its own seeded row. */
export const EMPLOYEES = new Map([
  [EMPLOYEE_ID, { id: EMPLOYEE_ID, name: "Ada Lovelace", department: "Engineering", salary: 125000 }],
  [7, { id: 7, name: "Grace Hopper", department: "Research", salary: 131000 }],
]);

/** The customers the SOAP servers without a database serve (getCustomer with customerId 1). */
export const CUSTOMERS = new Map([
  [1, { id: 1, name: "Acme Corporation", email: "orders@acme.example" }],
  [2, { id: 2, name: "Globex", email: "buying@globex.example" }],
]);

export const JWT_ISSUER = "urn:svc:bench";
export const JWT_AUDIENCE = "urn:svc:api";

/**
 * A fresh ES256 key pair and a token signed with it. The public key travels to the peer stack
 * through the `BENCH_JWK` environment variable, the token goes in every client request.
 */
export async function issueBenchToken() {
  const { privateKey, publicKey } = await generateKeyPair("ES256", { extractable: true });
  const token = await new SignJWT({ scope: "employees:read" })
    .setProtectedHeader({ alg: "ES256", kid: "bench" })
    .setIssuer(JWT_ISSUER)
    .setAudience(JWT_AUDIENCE)
    .setSubject("bench-user")
    .setIssuedAt()
    .setExpirationTime("2h")
    .sign(privateKey);
  return { token, publicJwk: JSON.stringify(await exportJWK(publicKey)) };
}

/** The verification key a server reads from `BENCH_JWK`. */
export async function benchVerificationKey() {
  const raw = process.env.BENCH_JWK;
  if (!raw) throw new Error("BENCH_JWK is not set: start this server through the bench harness");
  return importJWK(JSON.parse(raw), "ES256");
}

/** The port the harness chose for this server. */
export function benchPort() {
  const port = Number(process.env.PORT);
  if (!Number.isInteger(port) || port <= 0) throw new Error("PORT must be set to the port to listen on");
  return port;
}

/**
 * Listens with `app` on the bench port. With `BENCH_PROTOTYPES=classes` the http server builds
 * requests and responses whose prototypes are already the app's (as the reference server does),
 * so Express's per-request `Object.setPrototypeOf` is a no-op: without it V8 gives every request
 * and response a map of its own, and each property a middleware adds misses the inline caches.
 */
export function listenApp(app) {
  // Loaded here, not imported: the Hono apps that import this file also bundle as Workers.
  const http = process.getBuiltinModule("node:http");
  const options = {};
  if (process.env.BENCH_PROTOTYPES === "classes") {
    class AppRequest extends http.IncomingMessage {}
    class AppResponse extends http.ServerResponse {}
    Object.setPrototypeOf(AppRequest.prototype, app.request);
    Object.setPrototypeOf(AppResponse.prototype, app.response);
    app.request = AppRequest.prototype;
    app.response = AppResponse.prototype;
    options.IncomingMessage = AppRequest;
    options.ServerResponse = AppResponse;
  }
  return http.createServer(options, app).listen(benchPort(), "127.0.0.1");
}

/** Exit normally on SIGTERM, so `--cpu-prof` gets to write its profile. */
export function exitOnSigterm() {
  process.once("SIGTERM", () => process.exit(0));
}

/**
 * Express middleware checking `Authorization: Bearer <JWT>` with jose's `jwtVerify` (ES256,
 * issuer and audience), as a team would write it; `onFailure(res)` writes the 401.
 */
export function requireBearer(key, onFailure) {
  return async function requireBearer(req, res, next) {
    const match = /^Bearer\s+(\S+)$/i.exec(req.headers.authorization ?? "");
    if (!match) {
      onFailure(res);
      return;
    }
    try {
      const { payload } = await jwtVerify(match[1], key, {
        issuer: JWT_ISSUER,
        audience: JWT_AUDIENCE,
        algorithms: ["ES256"],
      });
      res.locals.principal = payload.sub;
    } catch {
      onFailure(res);
      return;
    }
    next();
  };
}

/**
 * The X.509 material of the signed SOAP scenarios (`BENCH_WSSE=signature`): a CA and a partner
 * certificate it issued, with the partner's key, as soap-envelope's WS-Security suites use them.
 */
export const WSSE_FIXTURES = repositoryPath("packages/soap-envelope/src/__fixtures__/wsse");

/** `path` in the repository, from this module's place in `src/` or bundled into `dist/servers/`. */
function repositoryPath(path) {
  for (let dir = dirname(fileURLToPath(import.meta.url)); dir !== dirname(dir); dir = dirname(dir))
    if (existsSync(join(dir, "package-lock.json"))) return join(dir, path);
  throw new Error(`no repository above ${fileURLToPath(import.meta.url)} to find ${path} in`);
}

/** The signed scenarios' timestamp window: a signed message is sent again for the whole run. */
export const WSSE_MAX_AGE_MS = 3_600_000;
