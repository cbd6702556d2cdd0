// Issue 42: the stack a team on Hono assembles from Hono's own middleware instead of @svc:
// secureHeaders, cors, compress, etag, jwt (ES256, issuer and audience), logger, and
// hono-rate-limiter (a limit that never triggers). Served by hono-peers.mjs on this Node.js and by
// ../runtimes.mjs on the others.
import { Hono } from "hono";
import { compress } from "hono/compress";
import { cors } from "hono/cors";
import { etag } from "hono/etag";
import { jwt } from "hono/jwt";
import { logger } from "hono/logger";
import { secureHeaders } from "hono/secure-headers";
import { rateLimiter } from "hono-rate-limiter";
import { exportJWK } from "jose";
import { benchVerificationKey, EMPLOYEES, JWT_AUDIENCE, JWT_ISSUER } from "../fixtures.mjs";

const publicJwk = await exportJWK(await benchVerificationKey());

export const app = new Hono();
// The harness points this process's stdout at /dev/null: the log lines are written, not kept.
app.use(logger());
app.use(secureHeaders());
app.use(cors({ origin: ["https://app.example.com"] }));
app.use(compress());
// The same limit the reference server runs with in the bench: counted, never hit.
app.use(
  rateLimiter({
    windowMs: 1000,
    limit: 1_000_000,
    standardHeaders: "draft-7",
    // The peer as each server tells it (what hono's getConnInfo of hono/node-server, hono/bun
    // and hono/deno reads).
    keyGenerator: (c) =>
      c.env?.incoming?.socket?.remoteAddress ??
      c.env?.requestIP?.(c.req.raw)?.address ??
      c.env?.remoteAddr?.hostname ??
      "",
  }),
);
app.use(etag());
app.use(
  jwt({
    secret: publicJwk,
    alg: "ES256",
    verification: { iss: JWT_ISSUER, aud: JWT_AUDIENCE },
  }),
);

app.get("/employees/:id", (c) => {
  const accept = c.req.header("accept") ?? "*/*";
  if (!/application\/json|\*\/\*|application\/\*/.test(accept)) {
    return c.json({ status: 406, error: "Not Acceptable" }, 406);
  }
  const employee = EMPLOYEES.get(Number(c.req.param("id")));
  if (!employee) return c.json({ status: 404, error: "Not Found" }, 404);
  return c.json(employee);
});
