// Scenario 3: the stack a team assembles from the well-known middlewares instead of @svc:
// helmet, cors, compression, express-rate-limit (a limit that never triggers), pino-http,
// a jose jwtVerify of the Bearer token on every request, `accepts`, and Express's default ETag.
import "./tick-shape.mjs";
import accepts from "accepts";
import compression from "compression";
import cors from "cors";
import express from "express";
import { rateLimit } from "express-rate-limit";
import helmet from "helmet";
import { pino } from "pino";
import { pinoHttp } from "pino-http";
import { benchVerificationKey, EMPLOYEES, exitOnSigterm, listenApp, requireBearer } from "../fixtures.mjs";

const key = await benchVerificationKey();

// The harness points this process's stdout at /dev/null: the log lines are formatted and
// written like in production, they are just not kept.
const logger = pino({
  level: "info",
  redact: ["req.headers.authorization"],
});

const app = express();
app.use(helmet());
app.use(cors({ origin: ["https://app.example.com"] }));
app.use(compression());
app.use(pinoHttp({ logger }));
app.use(
  rateLimit({
    // The same limit the reference server runs with in the bench: counted, never hit.
    windowMs: 1000,
    limit: 1_000_000,
    standardHeaders: "draft-8",
    legacyHeaders: false,
  }),
);
app.use(
  requireBearer(key, (res) => {
    res
      .set("WWW-Authenticate", 'Bearer realm="api"')
      .status(401)
      .json({ status: 401, error: "Unauthorized" });
  }),
);

app.get("/employees/:id", (req, res) => {
  if (!accepts(req).type(["application/json"])) {
    res.status(406).json({ status: 406, error: "Not Acceptable" });
    return;
  }
  const employee = EMPLOYEES.get(Number(req.params.id));
  if (!employee) {
    res.status(404).json({ status: 404, error: "Not Found" });
    return;
  }
  res.json(employee);
});
listenApp(app);
exitOnSigterm();
