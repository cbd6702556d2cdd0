// The floor of packages-readme's GET /employees/{id} on Express: the same response (the same 13
// header fields with the same values, the same HAL body, a strong ETag over it) and the same work
// per request that no decision can avoid (a Bearer token looked up in a verified-token cache, a
// rate-limit counter), but none of the packages' decisions: no host, version or CORS checks, no
// negotiation, no preconditions, no scope check, one route and no `app.use` in front of it. Every
// header value that does not depend on the request is computed once at start-up. Run with
// BENCH_PROTOTYPES=classes, as packages-readme builds its requests (`expressServerOptions`).
// Whatever this costs a request, no change to the packages can take packages-readme below it.
import "./tick-shape.mjs";
import { hash } from "node:crypto";
import express from "express";
import { EMPLOYEES, exitOnSigterm, listenApp } from "../fixtures.mjs";
import { floorWork } from "./floor-work.mjs";

const floor = await floorWork();
const VARY = "API-Version, Accept-Version, Accept, Origin, Accept-Encoding";

const app = express();
app.set("etag", false);
app.get("/employees/:id", async (req, res) => {
  res.setHeader("API-Supported-Versions", "1, 2");
  res.setHeader("Vary", VARY);
  floor.count(await floor.subject(req.headers.authorization ?? ""), res);
  const employee = EMPLOYEES.get(Number(req.params.id));
  if (employee === undefined) {
    res.status(404).end();
    return;
  }
  const body = Buffer.from(
    JSON.stringify({
      _links: { self: { href: `http://${req.headers.host}/employees/${employee.id}` } },
      ...employee,
    }),
  );
  res.setHeader("Content-Type", "application/json; charset=utf-8");
  res.setHeader("ETag", `"${body.length.toString(16)}-${hash("sha1", body, "base64").slice(0, 27)}"`);
  res.setHeader("Cache-Control", "no-cache");
  res.setHeader("Content-Length", body.length);
  res.end(body);
});
listenApp(app);
exitOnSigterm();
