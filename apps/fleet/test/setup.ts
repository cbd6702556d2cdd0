import { serviceUrl } from "@svc/test-utils";
import { proxyAvailable } from "../src/nginx.js";

/** The shared PostgreSQL (a `postgres://` DATABASE_URL) or undefined, skipping visibly outside CI. */
export function postgresUrl(): string | undefined {
  const url = serviceUrl("DATABASE_URL");
  if (url === undefined) return undefined;
  if (/^postgres(ql)?:\/\//.test(url)) return url;
  const message = `DATABASE_URL is not a postgres:// URL (got ${url.split(":")[0]}:...)`;
  if (process.env.CI) throw new Error(`${message}: the fleet suites need PostgreSQL in CI`);
  console.warn(`[skip] ${message}: skipping the fleet suites`);
  return undefined;
}

/** What the fleet suites need: PostgreSQL, Redis, nginx and openssl (errors in CI when missing). */
export function fleetServices(): { databaseUrl: string; redisUrl: string } | undefined {
  const databaseUrl = postgresUrl();
  const redisUrl = serviceUrl("REDIS_URL");
  const tools = proxyAvailable();
  return databaseUrl && redisUrl && tools ? { databaseUrl, redisUrl } : undefined;
}
