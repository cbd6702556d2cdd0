import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { Logger } from "pino";
import type { Telemetry } from "./telemetry.js";

const PROMETHEUS_TYPE = "text/plain; version=0.0.4; charset=utf-8";
const ALLOW = "GET, HEAD";

/** A short plain-text answer: this listener is Prometheus's, not the API's, and has no error record. */
function answer(
  res: ServerResponse,
  status: number,
  text: string,
  fields: Record<string, string> = {},
): void {
  res.writeHead(status, {
    "content-type": "text/plain; charset=utf-8",
    "cache-control": "no-store",
    "x-content-type-options": "nosniff",
    ...fields,
  });
  res.end(`${text}\n`);
}

/**
 * The operator's listener (`METRICS_PORT`, `METRICS_HOST`): `GET /metrics` is every decision of
 * the packages as OpenTelemetry metrics in the Prometheus text exposition format 0.0.4, never
 * cached; any other path is a 404, any other method a 405 with `Allow`. It is apart from the
 * API's listener, so a client that reaches the API does not reach it, and scrapes none of it.
 *
 * @example const server = metricsServer(telemetry, logger); server.listen(9464, "127.0.0.1");
 * @see https://prometheus.io/docs/instrumenting/exposition_formats/#text-based-format
 * @see https://owasp.org/API-Security/editions/2023/en/0xa8-security-misconfiguration/ operational endpoints kept off the API
 */
export function metricsServer(telemetry: Pick<Telemetry, "metricsText">, logger: Logger): Server {
  return createServer((req: IncomingMessage, res: ServerResponse) => {
    const path = (req.url ?? "/").split("?")[0];
    if (path !== "/metrics") return answer(res, 404, "Not Found: the metrics are at /metrics");
    if (req.method !== "GET" && req.method !== "HEAD")
      return answer(res, 405, "Method Not Allowed", { allow: ALLOW });
    telemetry.metricsText().then(
      (text) => {
        const body = Buffer.from(text, "utf8");
        res.writeHead(200, {
          "content-type": PROMETHEUS_TYPE,
          "content-length": String(body.length),
          "cache-control": "no-store",
          "x-content-type-options": "nosniff",
        });
        res.end(req.method === "HEAD" ? undefined : body);
      },
      (err: unknown) => {
        logger.error({ err }, "the metrics could not be collected");
        answer(res, 500, "Internal Server Error");
      },
    );
  });
}
