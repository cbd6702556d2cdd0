// Scenario 1, the practical limit: node:http answering with bytes computed once at start-up.
// No routing library, no middleware, no per-request serialisation.
import "./tick-shape.mjs";
import { createServer } from "node:http";
import { benchPort, EMPLOYEES, exitOnSigterm } from "../fixtures.mjs";

const bodies = new Map();
for (const [id, employee] of EMPLOYEES) {
  bodies.set(`/employees/${id}`, Buffer.from(JSON.stringify(employee)));
}
const notFound = Buffer.from(JSON.stringify({ status: 404, error: "Not Found" }));

const server = createServer((req, res) => {
  const body = req.method === "GET" ? bodies.get(req.url ?? "") : undefined;
  res.writeHead(body ? 200 : 404, {
    "content-type": "application/json; charset=utf-8",
    "content-length": (body ?? notFound).length,
  });
  res.end(body ?? notFound);
});
server.listen(benchPort(), "127.0.0.1");
exitOnSigterm();
