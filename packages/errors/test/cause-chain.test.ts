import { listen } from "@svc/test-utils";
import express from "express";
import { afterEach, describe, expect, it, vi } from "vitest";
import { errorHandler } from "../src/express.js";
import { DEFAULT_CAUSE_DEPTH, HttpError } from "../src/index.js";

/** A JWKS outage as a verifier reports it: a 503 whose cause is fetch's error, whose cause is the sockets'. */
function jwksOutage(): HttpError {
  const v4 = Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:9"), {
    code: "ECONNREFUSED",
    syscall: "connect",
    address: "127.0.0.1",
  });
  const v6 = Object.assign(new Error("connect ECONNREFUSED ::1:9"), { code: "ECONNREFUSED", address: "::1" });
  const sockets = new AggregateError([v4, v6], "all addresses refused");
  const fetchFailed = Object.assign(new TypeError("fetch failed", { cause: sockets }), {
    url: "https://issuer.example/.well-known/jwks.json",
  });
  return new HttpError(503, "The JSON Web Key Set could not be fetched", {
    cause: fetchFailed,
    code: "jwks_unavailable",
  });
}

let closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  vi.restoreAllMocks();
  await Promise.all(closers.map((c) => c()));
  closers = [];
});

async function serve(thrown: () => unknown, options: Parameters<typeof errorHandler>[0] = {}) {
  const app = express();
  app.get("/fail", () => {
    throw thrown();
  });
  app.use(errorHandler(options));
  const server = await listen(app);
  closers.push(server.close);
  return server.url;
}

/** The fallback logger's "request failed" lines on stderr, parsed; other writes pass through. */
function captureStderr(): Record<string, unknown>[] {
  const lines: Record<string, unknown>[] = [];
  const write = process.stderr.write.bind(process.stderr);
  vi.spyOn(process.stderr, "write").mockImplementation(((chunk: string | Uint8Array, ...rest: never[]) => {
    const text = String(chunk);
    if (!text.includes('"msg":"request failed"')) return write(chunk, ...rest);
    lines.push(JSON.parse(text) as Record<string, unknown>);
    return true;
  }) as typeof process.stderr.write);
  return lines;
}

type Logged = { type?: string; message?: string; stack?: string; cause?: Logged; errors?: Logged[] } & Record<
  string,
  unknown
>;

describe("default logger: a 5xx keeps its whole cause chain, the client sees none of it", () => {
  it("GET /fail (503 JWKS ← fetch failed + url ← AggregateError of two ECONNREFUSED) → one line with every link", async () => {
    const lines = captureStderr();
    const url = await serve(jwksOutage);
    const res = await fetch(`${url}/fail`, { headers: { Accept: "application/problem+json" } });
    expect(res.status).toBe(503);
    const body = await res.text();
    for (const secret of [
      "ECONNREFUSED",
      "fetch failed",
      "issuer.example",
      "JSON Web Key",
      "127.0.0.1",
      "stack",
    ]) {
      expect(body).not.toContain(secret);
    }
    expect(lines).toHaveLength(1);
    const err = (lines[0] as { err: Logged }).err;
    // The HttpError itself: its message, status and code, not only its cause.
    expect(err).toMatchObject({
      type: "HttpError",
      message: "The JSON Web Key Set could not be fetched",
      status: 503,
      code: "jwks_unavailable",
    });
    expect(err.stack).toContain("The JSON Web Key Set could not be fetched");
    expect(err.cause).toMatchObject({
      type: "TypeError",
      message: "fetch failed",
      url: "https://issuer.example/.well-known/jwks.json",
    });
    expect(err.cause?.stack).toContain("TypeError: fetch failed");
    expect(err.cause?.cause).toMatchObject({ type: "AggregateError", message: "all addresses refused" });
    expect(err.cause?.cause?.errors).toEqual([
      expect.objectContaining({
        message: "connect ECONNREFUSED 127.0.0.1:9",
        code: "ECONNREFUSED",
        syscall: "connect",
      }),
      expect.objectContaining({ message: "connect ECONNREFUSED ::1:9", address: "::1" }),
    ]);
  });

  it(`GET /fail (a cause chain of 30, then a cycle) → ${DEFAULT_CAUSE_DEPTH} causes kept, then cut; the request answers`, async () => {
    const lines = captureStderr();
    const url = await serve(() => {
      const first = new Error("link 0");
      let err = first;
      for (let i = 1; i < 30; i++) err = new Error(`link ${i}`, { cause: err });
      (first as { cause?: unknown }).cause = err;
      return err;
    });
    const res = await fetch(`${url}/fail`);
    expect(res.status).toBe(500);
    expect(await res.text()).not.toContain("link");
    let link = (lines[0] as { err: Logged }).err;
    const messages: string[] = [];
    while (typeof link === "object") {
      messages.push(link.message as string);
      link = link.cause as Logged;
    }
    expect(messages).toHaveLength(DEFAULT_CAUSE_DEPTH + 1);
    expect(messages[0]).toBe("link 29");
    expect(link).toBe("[cause chain truncated]");
  });

  it("GET /fail (a cycle a → b → a) → [Circular], one line", async () => {
    const lines = captureStderr();
    const url = await serve(() => {
      const a = new Error("a");
      const b = new Error("b", { cause: a });
      (a as { cause?: unknown }).cause = b;
      return a;
    });
    expect((await fetch(`${url}/fail`)).status).toBe(500);
    expect(lines).toHaveLength(1);
    expect((lines[0] as { err: Logged }).err.cause?.cause).toBe("[Circular]");
  });

  it("a given logger receives the HttpError as thrown (its cause attached), not only its cause", async () => {
    const calls: Record<string, unknown>[] = [];
    const thrown = jwksOutage();
    const url = await serve(() => thrown, {
      logger: { error: (obj) => calls.push(obj as Record<string, unknown>) },
    });
    expect((await fetch(`${url}/fail`)).status).toBe(503);
    expect(calls).toHaveLength(1);
    expect(calls[0]?.err).toBe(thrown);
    expect((calls[0]?.err as Error | undefined)?.cause).toBe(thrown.cause);
  });
});
