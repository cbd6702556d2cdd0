import { isHttpError } from "@svc/errors";
import { describe, expect, it } from "vitest";
import { fromDatabaseError } from "../src/errors.js";

/** What the drivers raise when the database cannot be reached: each is a 503, never a 500. */
describe("fromDatabaseError: an unreachable database → 503 with Retry-After", () => {
  it.each([
    // pg, when the connection broke under a transaction and its ROLLBACK is sent on it
    ["Client has encountered a connection error and is not queryable", undefined],
    ["Client was closed and is not queryable", undefined],
    ["Connection terminated unexpectedly", undefined],
    ["timeout exceeded when trying to connect", undefined],
    ["Query read timeout", undefined],
    ["connect ECONNREFUSED 127.0.0.1:5432", undefined],
    ["terminating connection due to administrator command", "57P01"],
    ["database is locked", "SQLITE_BUSY"],
  ])("%s (%s) → 503", (message, code) => {
    const mapped = fromDatabaseError(Object.assign(new Error(message), code ? { code } : {}));
    expect(isHttpError(mapped) && mapped.status).toBe(503);
    expect(isHttpError(mapped) && mapped.headers["Retry-After"]).toBe("5");
  });

  it.each([
    ["duplicate key value violates unique constraint", "23505", 409],
    ["violates foreign key constraint", "23503", 409],
  ])("%s (%s) → %i", (message, code, status) => {
    const mapped = fromDatabaseError(Object.assign(new Error(message), { code }));
    expect(isHttpError(mapped) && mapped.status).toBe(status);
  });

  it("any other error is left as it is (a 500: something really broke)", () => {
    const err = new Error('column "x" does not exist');
    expect(fromDatabaseError(err)).toBe(err);
  });
});
