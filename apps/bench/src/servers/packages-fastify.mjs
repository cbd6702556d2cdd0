// The app of packages-readme.mjs on Fastify 5: what a team on Fastify gets when it composes its
// app from the @svc packages' `/fastify` entries as each README's "Frameworks" section shows,
// serving the same in-memory employee as fastify-peers.mjs. Each block names the README it
// comes from. Fastify's own logger is on, as in fastify-peers.mjs: it is the framework's, not a
// package's, so both rows pay for the same access line.
// Runs from the packages' TypeScript sources through ../ts-loader.mjs, like packages-readme.

import "./tick-shape.mjs";
import { auth, requireScopes } from "@svc/auth/fastify";
import { HttpError } from "@svc/errors";
import { errorPlugin } from "@svc/errors/fastify";
import { hal, Rel } from "@svc/hal";
import { allowedHosts, hrefFor } from "@svc/hal/fastify";
import { MemoryStore } from "@svc/idempotency";
import { idempotency } from "@svc/idempotency/fastify";
import { reply } from "@svc/kernel";
import { fastifyAdapter } from "@svc/kernel/fastify";
import { crossOrigin, parseBody } from "@svc/negotiate/fastify";
import { rateLimit } from "@svc/ratelimit/fastify";
import { versionedPath } from "@svc/versioning/fastify";
import Fastify from "fastify";
import { benchPort, EMPLOYEES, exitOnSigterm } from "../fixtures.mjs";
import { readmeAuth, readmePipeline } from "./readme-pipeline.mjs";

// @svc/kernel, "Frameworks": the same pipeline as packages-readme, through the Fastify adapter.
const svc = fastifyAdapter(readmePipeline());

// @svc/versioning, "Frameworks": Fastify routes before any hook runs, so the /v<N> prefix is
// stripped by its rewriteUrl option. The harness points stdout at /dev/null: the log lines are
// written, not kept.
const app = Fastify({
  rewriteUrl: svc.rewriteUrl,
  logger: { level: "info", redact: ["req.headers.authorization"] },
});
// @svc/errors, "Frameworks": the error records and the 404 of unmatched routes, on the root.
await app.register(errorPlugin);
// @svc/hal, "Frameworks": only the service's own hosts answer.
await app.register(allowedHosts, { hosts: ["127.0.0.1", "localhost"] });
// @svc/kernel: the version's fields on every reply, its refusal through the error handler.
await app.register(svc.plugin);
// @svc/negotiate, "Frameworks": the same origin list as fastify-peers' @fastify/cors.
await app.register(crossOrigin, { origins: ["https://app.example.com"] });
// @svc/auth, "Frameworks": Bearer JWTs (ES256, one public key), issuer and audience checked.
await app.register(auth, readmeAuth);
// @svc/ratelimit, "Frameworks": registered after auth, so limits apply per principal. The same
// limit as fastify-peers' @fastify/rate-limit: counted on every request, never hit.
await app.register(rateLimit, { limit: 1_000_000, windowMs: 1000 });
// @svc/negotiate, "Frameworks": one body parser through the core (415, 413, 400 as on Express).
await app.register(parseBody, { limit: 100 * 1024 });

// The plain document (`toJSON()`), as in packages-readme.mjs.
function represent(request, employee) {
  return hal(employee)
    .link(Rel.SELF, hrefFor(request, versionedPath(request, `/employees/${employee.id}`)))
    .toJSON();
}

app.get(
  "/employees/:id",
  { onRequest: requireScopes("employees:read") },
  svc.handle(async (request) => {
    const employee = EMPLOYEES.get(Number(request.params.id));
    if (!employee) throw HttpError.notFound(`Employee ${request.params.id} does not exist`);
    return represent(request, employee);
  }),
);

// @svc/idempotency, "Frameworks": the step on the route of the Fastify adapter.
let nextId = 1000;
const keys = { idempotency: idempotency({ store: new MemoryStore() }) };
app.post(
  "/employees",
  svc.handle(async (request) => {
    const employee = { ...request.body, id: nextId++ };
    EMPLOYEES.set(employee.id, employee);
    const location = hrefFor(request, versionedPath(request, `/employees/${employee.id}`));
    return reply(represent(request, employee), { status: 201, headers: { Location: location } });
  }, keys),
);

await app.listen({ port: benchPort(), host: "127.0.0.1" });
exitOnSigterm();
