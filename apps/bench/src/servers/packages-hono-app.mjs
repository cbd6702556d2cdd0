// The app of packages-readme.mjs on Hono (served by packages-hono.mjs on @hono/node-server, and by
// ../runtimes.mjs on the other runtimes' own servers): what a team on a Fetch server
// gets when it composes its app from the @svc packages' `/fetch` entries as each README's
// "Frameworks" section shows, serving the same in-memory employee as hono-peers.mjs. Each block
// names the README it comes from. Hono's own `logger()` is on, as in hono-peers.mjs: it is the
// framework's, not a package's, so both rows pay for the same access lines.
// Runs from the packages' TypeScript sources through ../ts-loader.mjs, like packages-readme.
import { authenticate, requireScopes } from "@svc/auth/fetch";
import { HttpError } from "@svc/errors";
import { notFoundHandler, onError } from "@svc/errors/fetch";
import { hal, Rel } from "@svc/hal";
import { allowedHosts, hrefFor } from "@svc/hal/fetch";
import { MemoryStore } from "@svc/idempotency";
import { idempotency } from "@svc/idempotency/fetch";
import { reply } from "@svc/kernel";
import { fetchAdapter, honoConnection } from "@svc/kernel/fetch";
import { crossOrigin, parseBody } from "@svc/negotiate/fetch";
import { rateLimit } from "@svc/ratelimit/fetch";
import { versionedPath } from "@svc/versioning/fetch";
import { Hono } from "hono";
import { logger } from "hono/logger";
import { EMPLOYEES } from "../fixtures.mjs";
import { readmeAuth, readmePipeline } from "./readme-pipeline.mjs";

// @svc/kernel, "Frameworks": the same pipeline as packages-readme, through the Fetch adapter.
const svc = fetchAdapter(readmePipeline());

// @svc/versioning, "Frameworks": Hono routes on the path its getPath option returns, the /v<N>
// prefix stripped.
export const app = new Hono({ getPath: svc.getPath });
// The harness points this process's stdout at /dev/null: the log lines are written, not kept.
app.use(logger());
// @svc/hal, "Frameworks": only the service's own hosts answer.
app.use(allowedHosts(["127.0.0.1", "localhost"]));
// @svc/kernel: the version's fields on every response, its refusal thrown for app.onError.
app.use(svc.middleware);
// @svc/negotiate, "Frameworks": the same origin list as hono-peers' cors.
app.use(crossOrigin({ origins: ["https://app.example.com"] }));
// @svc/auth, "Frameworks": Bearer JWTs (ES256, one public key), issuer and audience checked.
app.use(authenticate(readmeAuth));
// @svc/ratelimit, "Frameworks": after authenticate, so limits apply per principal; on
// @hono/node-server the client's address comes from the connection. The same limit as
// hono-peers' hono-rate-limiter: counted on every request, never hit.
app.use(rateLimit({ limit: 1_000_000, windowMs: 1000 }));

// The plain document (`toJSON()`), as in packages-readme.mjs; @svc/hal, "Frameworks": the link's
// base URL from the request and what @hono/node-server tells of the connection.
function represent(c, employee) {
  const path = versionedPath(c, `/employees/${employee.id}`);
  return hal(employee)
    .link(Rel.SELF, hrefFor(c.req.raw, path, { info: honoConnection(c) }))
    .toJSON();
}

app.get("/employees/:id", requireScopes("employees:read"), (c) =>
  svc.respond(c.req.raw, () => {
    const employee = EMPLOYEES.get(Number(c.req.param("id")));
    if (!employee) throw HttpError.notFound(`Employee ${c.req.param("id")} does not exist`);
    return represent(c, employee);
  }),
);

// @svc/negotiate and @svc/idempotency, "Frameworks": the route reads the body once and hands it
// to respond, for the key's fingerprint.
let nextId = 1000;
const readBody = parseBody({ limit: 100 * 1024 });
const route = { idempotency: idempotency({ store: new MemoryStore() }) };
app.post("/employees", async (c) => {
  const body = await readBody(c.req.raw, honoConnection(c));
  return svc.respond(
    c.req.raw,
    () => {
      const employee = { ...body, id: nextId++ };
      EMPLOYEES.set(employee.id, employee);
      const location = hrefFor(c.req.raw, versionedPath(c, `/employees/${employee.id}`), {
        info: honoConnection(c),
      });
      return reply(represent(c, employee), { status: 201, headers: { Location: location } });
    },
    { route, body },
  );
});

// @svc/errors, "Frameworks": unmatched routes → 404 record; errors → their records.
app.notFound(notFoundHandler());
app.onError(onError());
