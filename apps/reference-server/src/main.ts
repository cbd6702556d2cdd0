import "./tick-shape.js";
import { ConfigError, loadConfig } from "./config.js";
import { startService } from "./server.js";

/** Starts the reference service from the environment; exits 1 with a clear message on bad configuration. */
async function main(): Promise<void> {
  let config: ReturnType<typeof loadConfig>;
  try {
    config = loadConfig(process.env);
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(err.message);
      process.exit(1);
    }
    throw err;
  }
  const service = await startService(config);
  const lines = [
    "",
    `  @svc reference service listening on ${service.url} (${config.framework === "fastify" ? "Fastify" : "Express"})`,
    `  API docs:      ${service.url}/docs   (OpenAPI: ${service.url}/openapi.json)`,
    `  Metrics:       ${service.metricsUrl ?? "not served (set METRICS_PORT for a listener of their own)"}`,
    `  Database:      ${config.database.kind === "sqlite" ? config.database.filename : "PostgreSQL"}`,
    config.demoUsers.length > 0
      ? `  Demo users:    ${config.demoUsers.map((u) => `${u.username}/${u.password} (${u.role})`).join(", ")}`
      : "  Demo users:    none (set DEMO_USERS)",
    `  Try:           curl -u ${config.demoUsers[0]?.username ?? "user"}:${config.demoUsers[0]?.password ?? "password"} ${service.url}/employees`,
    "",
  ];
  process.stdout.write(`${lines.join("\n")}\n`);
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    const grace = config.shutdownGraceSeconds;
    service.logger.info(
      { signal, graceSeconds: grace },
      "shutting down: refusing new connections, finishing in-flight requests",
    );
    // A request that never ends must not keep the process alive for ever: past the grace period
    // the exit code says the shutdown was not clean.
    setTimeout(() => {
      service.logger.error({ graceSeconds: grace }, "shutdown took longer than the grace period; exiting");
      process.exit(1);
    }, grace * 1000).unref();
    service.close().then(
      () => process.exit(0),
      (err: unknown) => {
        service.logger.error({ err }, "shutdown failed");
        process.exit(1);
      },
    );
  };
  process.on("SIGTERM", () => stop("SIGTERM"));
  process.on("SIGINT", () => stop("SIGINT"));
}

main().catch((err: unknown) => {
  console.error("The service could not start:", err instanceof Error ? err.message : err);
  process.exit(1);
});
