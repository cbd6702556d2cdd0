// The floor of the reference server's GET /employees/{id} on Express: the same response (the same
// 23 header fields with the same values, the same HAL body, a strong ETag over it) and the same
// work per request that no decision can avoid (a Bearer token looked up in a verified-token cache,
// a rate-limit counter, the row read from SQLite through a prepared statement, one JSON access
// line through pino), but none of the packages' decisions: no negotiation, no preconditions, no
// version, host or CORS checks, no validation. Every header value that does not depend on the
// request is computed once at start-up. Run with BENCH_PROTOTYPES=classes, as the reference server
// builds its requests. Whatever this costs a request, no change to the packages can take the
// reference server below it.
import "./tick-shape.mjs";
import { hash, randomUUID } from "node:crypto";
import Database from "better-sqlite3";
import express from "express";
import helmet from "helmet";
import pino from "pino";
import { EMPLOYEES, exitOnSigterm, listenApp } from "../fixtures.mjs";
import { floorWork } from "./floor-work.mjs";

// helmet's headers, read once (its default directives are static), as the reference server does.
const securityHeaders = [];
helmet({ strictTransportSecurity: false })(
  {},
  { setHeader: (name, value) => securityHeaders.push([name, String(value)]), removeHeader() {} },
  () => {},
);

// The reference server's item read: the employee joined with its department, the full name
// computed, as one derived table, through a statement prepared once (raw rows).
const db = new Database(":memory:");
db.exec(`
  CREATE TABLE departments (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE);
  CREATE TABLE employees (id INTEGER PRIMARY KEY, first_name TEXT NOT NULL, last_name TEXT NOT NULL,
    email TEXT NOT NULL UNIQUE, department_id INTEGER NOT NULL REFERENCES departments(id), city TEXT NOT NULL,
    salary INTEGER NOT NULL, manager_id INTEGER REFERENCES employees(id), updated_at TEXT NOT NULL);
`);
db.prepare("INSERT INTO departments VALUES (1, 'Engineering'), (2, 'Research')").run();
const insert = db.prepare("INSERT INTO employees VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)");
for (const [id, e] of EMPLOYEES) {
  const [first, last] = e.name.split(" ");
  insert.run(
    id,
    first,
    last,
    `${first.toLowerCase()}@example.com`,
    e.department === "Engineering" ? 1 : 2,
    "Berlin",
    e.salary,
    null,
    new Date().toISOString(),
  );
}
const select = db
  .prepare(
    `SELECT t.* FROM (SELECT e.*, d.name AS department, trim(e.first_name || ' ' || e.last_name) AS full_name
       FROM employees AS e INNER JOIN departments AS d ON d.id = e.department_id) AS t WHERE t.id = ?`,
  )
  .raw();
// Column positions of the raw row above.
const [ID, , , EMAIL, DEPARTMENT_ID, CITY, SALARY, MANAGER_ID, , DEPARTMENT, FULL_NAME] = Array.from(
  { length: 11 },
  (_, i) => i,
);

const logger = pino({ level: "info" });
const floor = await floorWork();
const VARY = "Origin, API-Version, Accept-Version, Accept, Accept-Encoding";

const app = express();
app.disable("x-powered-by");
app.set("etag", false);
app.get("/employees/:id", async (req, res) => {
  const start = performance.now();
  const correlationId = randomUUID();
  res.on("close", () => {
    logger.info(
      {
        correlationId,
        method: req.method,
        url: req.originalUrl,
        statusCode: res.statusCode,
        responseTime: Math.round(performance.now() - start),
        remoteAddress: req.socket.remoteAddress,
        userAgent: req.headers["user-agent"],
      },
      "request completed",
    );
  });
  for (const [name, value] of securityHeaders) res.setHeader(name, value);
  res.setHeader("X-Correlation-ID", correlationId);
  res.setHeader("Vary", VARY);
  res.setHeader("API-Supported-Versions", "1, 2");
  floor.count(await floor.subject(req.headers.authorization ?? ""), res);
  const row = select.get(Number(req.params.id));
  if (row === undefined) {
    res.status(404).end();
    return;
  }
  const self = `http://${req.headers.host}/employees/${row[ID]}`;
  const body = Buffer.from(
    JSON.stringify({
      _links: {
        self: { href: self },
        update: { href: self },
        delete: { href: self },
        department: { href: `http://${req.headers.host}/departments/${row[DEPARTMENT_ID]}` },
        projects: { href: `${self}/projects` },
      },
      id: row[ID],
      name: row[FULL_NAME],
      email: row[EMAIL],
      department: row[DEPARTMENT],
      city: row[CITY],
      salary: row[SALARY],
      managerId: row[MANAGER_ID],
    }),
  );
  res.setHeader("Content-Type", "application/json; charset=utf-8");
  res.setHeader("Content-Length", body.length);
  res.setHeader("Cache-Control", "no-cache");
  res.setHeader("ETag", `"${body.length.toString(16)}-${hash("sha1", body, "base64").slice(0, 27)}"`);
  res.end(body);
});
listenApp(app);
exitOnSigterm();
