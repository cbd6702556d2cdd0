import { listen } from "@svc/test-utils";
import { afterEach } from "vitest";
import { type ErrorHandlerOptions, errorHandler } from "../src/express.js";

/** The four renderings of one error record, in the order the tests read them. */
export const ACCEPTS = [
  "application/json",
  "application/problem+json",
  "application/xml",
  "application/problem+xml",
];

/**
 * For a test file: a `serve(make)` that starts a plain node:http server handing `make()` to
 * `errorHandler(options)` (a quiet logger unless given), closed after each test.
 */
export function useErrorServer(options: ErrorHandlerOptions = {}): (make: () => unknown) => Promise<string> {
  let closers: (() => Promise<void>)[] = [];
  afterEach(async () => {
    await Promise.all(closers.map((c) => c()));
    closers = [];
  });
  return async (make) => {
    const handle = errorHandler({ logger: { error() {} }, ...options });
    const server = await listen((req, res) => handle(make(), req, res, () => res.destroy()));
    closers.push(server.close);
    return server.url;
  };
}
