import { HttpError, isHttpError } from "@svc/errors";

const UNREACHABLE = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ETIMEDOUT",
  "ENOTFOUND",
  "EHOSTUNREACH",
  "EPIPE",
  "57P01", // admin_shutdown
  "57P03", // cannot_connect_now
  "53300", // too_many_connections
  "SQLITE_BUSY",
  "SQLITE_CANTOPEN",
]);

/** PostgreSQL's unique_violation and SQLite's two unique-constraint codes. */
const UNIQUE_VIOLATIONS = new Set(["23505", "SQLITE_CONSTRAINT_UNIQUE", "SQLITE_CONSTRAINT_PRIMARYKEY"]);

/** Whether a driver error says a unique value (or a primary key) is already taken. */
export function isUniqueViolation(err: unknown): boolean {
  const code = typeof err === "object" && err !== null ? (err as { code?: unknown }).code : undefined;
  return typeof code === "string" && UNIQUE_VIOLATIONS.has(code);
}

/**
 * Maps what the database drivers raise to the service's statuses: a unique value taken → 409,
 * a database that cannot be reached → 503 with Retry-After (spec part 7: never a 500 for that).
 */
export function fromDatabaseError(err: unknown): unknown {
  if (isHttpError(err) || typeof err !== "object" || err === null) return err;
  const e = err as { code?: unknown; message?: unknown };
  const code = typeof e.code === "string" ? e.code : "";
  const message = typeof e.message === "string" ? e.message : "";
  if (UNIQUE_VIOLATIONS.has(code)) {
    return HttpError.conflict("A resource with the same unique value already exists", { cause: err });
  }
  if (code === "23503" || code === "SQLITE_CONSTRAINT_FOREIGNKEY") {
    return HttpError.conflict("The resource is still referenced by other resources", { cause: err });
  }
  if (
    UNREACHABLE.has(code) ||
    /timeout exceeded when trying to connect|Query read timeout|Connection terminated|connect ECONNREFUSED|database connection is not open|is not queryable|driver has already been destroyed|pool.*(ended|destroyed)/i.test(
      message,
    )
  ) {
    return HttpError.serviceUnavailable(5, "The database is unavailable; retry shortly", { cause: err });
  }
  return err;
}
