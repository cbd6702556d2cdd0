// Issue 42: the stack a team on Fastify assembles from Fastify's own plugins instead of @svc:
// @fastify/helmet, @fastify/cors, @fastify/compress, @fastify/rate-limit (a limit that never
// triggers), @fastify/etag, @fastify/jwt (ES256, issuer and audience), Fastify's own logger
// (pino, one line a request), and `accepts` for the 406.
import "./tick-shape.mjs";
import fastifyCompress from "@fastify/compress";
import fastifyCors from "@fastify/cors";
import fastifyEtag from "@fastify/etag";
import fastifyHelmet from "@fastify/helmet";
import fastifyJwt from "@fastify/jwt";
import fastifyRateLimit from "@fastify/rate-limit";
import accepts from "accepts";
import Fastify from "fastify";
import { exportSPKI } from "jose";
import {
  benchPort,
  benchVerificationKey,
  EMPLOYEES,
  exitOnSigterm,
  JWT_AUDIENCE,
  JWT_ISSUER,
} from "../fixtures.mjs";

const publicKey = await exportSPKI(await benchVerificationKey());

// The harness points this process's stdout at /dev/null: the log lines are written, not kept.
const app = Fastify({ logger: { level: "info", redact: ["req.headers.authorization"] } });
await app.register(fastifyHelmet);
await app.register(fastifyCors, { origin: ["https://app.example.com"] });
await app.register(fastifyCompress);
// The same limit the reference server runs with in the bench: counted, never hit.
await app.register(fastifyRateLimit, { max: 1_000_000, timeWindow: 1000 });
await app.register(fastifyEtag);
await app.register(fastifyJwt, {
  secret: { public: publicKey },
  verify: { algorithms: ["ES256"], allowedIss: JWT_ISSUER, allowedAud: JWT_AUDIENCE },
});
app.addHook("onRequest", async (request, reply) => {
  try {
    await request.jwtVerify();
  } catch {
    return reply
      .code(401)
      .header("WWW-Authenticate", 'Bearer realm="api"')
      .send({ status: 401, error: "Unauthorized" });
  }
});

app.get("/employees/:id", async (request, reply) => {
  if (!accepts(request.raw).type(["application/json"])) {
    return reply.code(406).send({ status: 406, error: "Not Acceptable" });
  }
  const employee = EMPLOYEES.get(Number(request.params.id));
  if (!employee) return reply.code(404).send({ status: 404, error: "Not Found" });
  return employee;
});

await app.listen({ port: benchPort(), host: "127.0.0.1" });
exitOnSigterm();
