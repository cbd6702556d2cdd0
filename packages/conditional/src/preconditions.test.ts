import { request } from "node:http";
import { errorHandler } from "@svc/errors/express";
import { type Listening, listen } from "@svc/test-utils";
import express from "express";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type CurrentValidators, evaluatePreconditions } from "./core.js";
import { preconditions } from "./express.js";

const CURRENT = '"v2"';
const MODIFIED = new Date("2026-03-01T12:00:00Z");
const BEFORE = "Sat, 28 Feb 2026 12:00:00 GMT";
const AT = "Sun, 01 Mar 2026 12:00:00 GMT";
const AFTER = "Mon, 02 Mar 2026 12:00:00 GMT";

interface Doc {
  etag: string;
  lastModified: Date;
  body: unknown;
}
const store = new Map<string, Doc>();

let server: Listening;
beforeAll(async () => {
  const app = express();
  app.use(express.json());
  const current = (req: express.Request): CurrentValidators | undefined => store.get(String(req.params.id));
  app.put("/docs/:id", preconditions({ current }), (req, res) => {
    const existed = store.has(String(req.params.id));
    store.set(String(req.params.id), { etag: CURRENT, lastModified: MODIFIED, body: req.body });
    res.status(existed ? 200 : 201).json({ ok: true });
  });
  app.patch("/strict/:id", preconditions({ current, required: true }), (_req, res) => {
    res.json({ ok: true, current: res.locals.current ?? null });
  });
  app.delete("/strict/:id", preconditions({ current, required: true }), (_req, res) => {
    res.status(204).end();
  });
  app.get("/docs/:id", preconditions({ current }), (_req, res) => res.json({ ok: true }));
  // A GET whose handler answers 404 when the resource does not exist, as a real one does.
  app.get("/items/:id", preconditions({ current }), (req, res) => {
    if (!store.has(String(req.params.id))) return void res.status(404).json({ missing: true });
    res.json({ ok: true });
  });
  app.put(
    "/broken/:id",
    preconditions({ current: () => Promise.reject(new Error("db down")) }),
    (_req, res) => res.json({}),
  );
  // A resource whose recorded modification time is unusable: a clock ahead, a bad timestamp.
  const FUTURE = new Date("2999-01-01T00:00:00Z");
  app.put(
    "/future/:id",
    preconditions({ current: () => ({ etag: CURRENT, lastModified: FUTURE }) }),
    (_req, res) => res.json({}),
  );
  app.get(
    "/future/:id",
    preconditions({ current: () => ({ etag: CURRENT, lastModified: FUTURE }) }),
    (_req, res) => res.json({}),
  );
  app.put(
    "/nodate/:id",
    preconditions({ current: () => ({ etag: CURRENT, lastModified: new Date(Number.NaN) }) }),
    (_req, res) => res.json({}),
  );
  app.use(errorHandler({ logger: { error: () => {} } }));
  server = await listen(app);
});
afterAll(() => server.close());

describe("current() giving a tag that is no entity-tag (a bare version number)", () => {
  it("PUT If-Match: 7 with current etag 7 (unquoted) → 500 naming it, not a 412 no retry can pass", async () => {
    const logged: unknown[] = [];
    const app = express();
    app.put("/v/:id", preconditions({ current: () => ({ etag: "7" }) }), (_req, res) => res.json({}));
    app.get("/v/:id", preconditions({ current: () => ({ etag: "7" }) }), (_req, res) => res.json({}));
    app.use(errorHandler({ logger: { error: (entry: { err: unknown }) => logged.push(entry.err) } }));
    const s = await listen(app);
    try {
      // RFC 9110 §8.8.3: entity-tag = [ weak ] opaque-tag, opaque-tag = DQUOTE *etagc DQUOTE. The
      // 412 would carry ETag: 7, which the client sends back, and which never matches.
      const put = await fetch(`${s.url}/v/1`, { method: "PUT", headers: { "if-match": "7" } });
      expect(put.status).toBe(500);
      expect(String(logged[0])).toMatch(/entity-tag/);
      // An unconditional request compares no tag: it is left alone.
      expect((await fetch(`${s.url}/v/1`)).status).toBe(200);
    } finally {
      await s.close();
    }
  });
});

describe("a GET or HEAD of a resource that does not exist (RFC 9110 §13.2.1)", () => {
  // "A server MUST ignore all received preconditions if its response to the same request without
  // those conditions, prior to processing the request content, would have been a status code
  // other than a 2xx (Successful) or 412 (Precondition Failed)": without them, this is a 404.
  it.each([
    ["GET", { "if-match": '"v1"' }],
    ["GET", { "if-match": "*" }],
    ["HEAD", { "if-match": CURRENT }],
    ["GET", { "if-match": '"v1"', "if-none-match": '"v1"' }],
  ])("%s /items/gone with %j → the handler's 404, not 412", async (method, headers) => {
    reset();
    const res = await fetch(`${server.url}/items/gone`, { method, headers });
    expect(res.status).toBe(404);
  });
  it("the same preconditions on an existing resource are still evaluated → 412", async () => {
    reset();
    expect((await fetch(`${server.url}/items/a`, { headers: { "if-match": '"v1"' } })).status).toBe(412);
    expect((await fetch(`${server.url}/items/a`, { headers: { "if-match": CURRENT } })).status).toBe(200);
  });
  it("a write keeps them: PUT If-Match: * on a missing resource → 412", async () => {
    reset();
    expect((await send("PUT", "/docs/gone", { "if-match": "*" })).status).toBe(412);
  });
});

function reset() {
  store.clear();
  store.set("a", { etag: CURRENT, lastModified: MODIFIED, body: {} });
}

const send = (method: string, path: string, headers: Record<string, string>) =>
  fetch(`${server.url}${path}`, {
    method,
    headers: { "content-type": "application/json", ...headers },
    ...(method === "GET" || method === "HEAD" || method === "DELETE" ? {} : { body: "{}" }),
  });

// RFC 9110 §13.2.2 evaluation order, as a table: [case, method, path, headers, expected status].
const table: Array<[string, string, string, Record<string, string>, number]> = [
  ["If-Match: current tag → proceeds", "PUT", "/docs/a", { "if-match": CURRENT }, 200],
  [
    "If-Match: list with the current tag → proceeds",
    "PUT",
    "/docs/a",
    { "if-match": `"v1", ${CURRENT}` },
    200,
  ],
  ["If-Match: stale tag → 412", "PUT", "/docs/a", { "if-match": '"v1"' }, 412],
  [
    "If-Match: weak form of the current tag → 412 (strong comparison)",
    "PUT",
    "/docs/a",
    { "if-match": `W/${CURRENT}` },
    412,
  ],
  ["If-Match: * on an existing resource → proceeds", "PUT", "/docs/a", { "if-match": "*" }, 200],
  ["If-Match: * on a missing resource → 412", "PUT", "/docs/new", { "if-match": "*" }, 412],
  ["If-Match: garbage → 412", "PUT", "/docs/a", { "if-match": "v2" }, 412],
  ["If-Match: empty → 412", "PUT", "/docs/a", { "if-match": "" }, 412],
  ["If-Match: the current tag behind garbage → 412", "PUT", "/docs/a", { "if-match": `x${CURRENT}` }, 412],
  ["If-Match: two tags without a comma → 412", "PUT", "/docs/a", { "if-match": `"v1" ${CURRENT}` }, 412],

  [
    "step 1 before step 2: If-Match matches, If-Unmodified-Since too old → proceeds",
    "PUT",
    "/docs/a",
    { "if-match": CURRENT, "if-unmodified-since": BEFORE },
    200,
  ],
  [
    "step 1 decides: If-Match stale, If-Unmodified-Since fine → 412",
    "PUT",
    "/docs/a",
    { "if-match": '"v1"', "if-unmodified-since": AFTER },
    412,
  ],
  [
    "If-Unmodified-Since: before Last-Modified → 412",
    "PUT",
    "/docs/a",
    { "if-unmodified-since": BEFORE },
    412,
  ],
  ["If-Unmodified-Since: at Last-Modified → proceeds", "PUT", "/docs/a", { "if-unmodified-since": AT }, 200],
  [
    "If-Unmodified-Since: not a date → ignored",
    "PUT",
    "/docs/a",
    { "if-unmodified-since": "last week" },
    200,
  ],
  // RFC 9110 §5.6.7: a recipient MUST accept all three HTTP-date formats.
  [
    "If-Unmodified-Since: rfc850-date before Last-Modified → 412",
    "PUT",
    "/docs/a",
    { "if-unmodified-since": "Saturday, 28-Feb-26 12:00:00 GMT" },
    412,
  ],
  [
    "If-Unmodified-Since: asctime-date before Last-Modified → 412",
    "PUT",
    "/docs/a",
    { "if-unmodified-since": "Sat Feb 28 12:00:00 2026" },
    412,
  ],
  [
    "If-Unmodified-Since: rfc850-date at Last-Modified → proceeds",
    "PUT",
    "/docs/a",
    { "if-unmodified-since": "Sunday, 01-Mar-26 12:00:00 GMT" },
    200,
  ],
  [
    "If-None-Match: * on a missing resource (create-only PUT) → 201",
    "PUT",
    "/docs/new",
    { "if-none-match": "*" },
    201,
  ],
  ["If-None-Match: * on an existing resource → 412", "PUT", "/docs/a", { "if-none-match": "*" }, 412],
  ["If-None-Match: current tag on PUT → 412", "PUT", "/docs/a", { "if-none-match": CURRENT }, 412],
  [
    "If-None-Match: weak form matches on PUT (weak comparison) → 412",
    "PUT",
    "/docs/a",
    { "if-none-match": `W/${CURRENT}` },
    412,
  ],
  ["If-None-Match: other tag → proceeds", "PUT", "/docs/a", { "if-none-match": '"v1"' }, 200],
  [
    "step 2 before step 3: If-Unmodified-Since too old, If-None-Match other → 412",
    "PUT",
    "/docs/a",
    { "if-unmodified-since": BEFORE, "if-none-match": '"v1"' },
    412,
  ],
  [
    "step 1 then step 3: If-Match ok, If-None-Match: * → 412",
    "PUT",
    "/docs/a",
    { "if-match": CURRENT, "if-none-match": "*" },
    412,
  ],
  ["GET If-None-Match: current → 304", "GET", "/docs/a", { "if-none-match": CURRENT }, 304],
  ["GET If-Modified-Since: at Last-Modified → 304", "GET", "/docs/a", { "if-modified-since": AT }, 304],
  [
    "GET If-Modified-Since ignored when If-None-Match present → 200",
    "GET",
    "/docs/a",
    { "if-none-match": '"v1"', "if-modified-since": AT },
    200,
  ],
  [
    "GET If-Modified-Since: asctime-date at Last-Modified → 304",
    "GET",
    "/docs/a",
    { "if-modified-since": "Sun Mar  1 12:00:00 2026" },
    304,
  ],
  // §13.1.3: an invalid HTTP-date is ignored, not read the way Date.parse would read it.
  [
    "GET If-Modified-Since: 31 Feb (no such date) → ignored, 200",
    "GET",
    "/docs/a",
    { "if-modified-since": "Tue, 31 Feb 2026 12:00:00 GMT" },
    200,
  ],
  [
    "GET If-Modified-Since: 25:00:00 → ignored, 200",
    "GET",
    "/docs/a",
    { "if-modified-since": "Mon, 02 Mar 2026 25:00:00 GMT" },
    200,
  ],
  [
    "PUT If-Modified-Since is not evaluated → proceeds",
    "PUT",
    "/docs/a",
    { "if-modified-since": AFTER },
    200,
  ],
  ["required: PATCH without precondition → 428", "PATCH", "/strict/a", {}, 428],
  ["required: DELETE without precondition → 428", "DELETE", "/strict/a", {}, 428],
  ["required: PATCH with If-Match → proceeds", "PATCH", "/strict/a", { "if-match": CURRENT }, 200],
  [
    "required: PATCH with If-Unmodified-Since → proceeds",
    "PATCH",
    "/strict/a",
    { "if-unmodified-since": AT },
    200,
  ],
  // RFC 9110 §13.1.4: an If-Unmodified-Since that is not a valid HTTP-date is ignored, so the
  // write would go ahead unconditionally: it does not make the request conditional (RFC 6585 §3).
  [
    "required: PATCH with an If-Unmodified-Since that is not a date → 428",
    "PATCH",
    "/strict/a",
    { "if-unmodified-since": "last week" },
    428,
  ],
  // RFC 9110 §13.1.2: an If-None-Match naming no entity-tag (empty, or only malformed members)
  // matches nothing, so it is true for every state: the write would go ahead unconditionally.
  ["required: PATCH with an empty If-None-Match → 428", "PATCH", "/strict/a", { "if-none-match": "" }, 428],
  [
    "required: DELETE with If-None-Match: garbage → 428",
    "DELETE",
    "/strict/a",
    { "if-none-match": "garbage" },
    428,
  ],
  [
    "required: DELETE with If-None-Match: * → proceeds (412: it exists)",
    "DELETE",
    "/strict/a",
    { "if-none-match": "*" },
    412,
  ],
  [
    "required: PATCH with If-None-Match: a tag → proceeds",
    "PATCH",
    "/strict/a",
    { "if-none-match": '"other"' },
    200,
  ],
  [
    "required: PATCH with only If-Modified-Since → 428",
    "PATCH",
    "/strict/a",
    { "if-modified-since": AT },
    428,
  ],
  ["current() fails → 500 through the error handler", "PUT", "/broken/a", { "if-match": CURRENT }, 500],
];

describe("preconditions (RFC 9110 §13.2.2, RFC 6585 §3)", () => {
  it.each(table)("%s", async (_name, method, path, headers, status) => {
    reset();
    const res = await send(method, path, headers);
    expect(res.status).toBe(status);
  });

  it("412 goes through the error record and carries the current validators", async () => {
    reset();
    const res = await send("PUT", "/docs/a", { "if-match": '"v1"' });
    expect(res.status).toBe(412);
    expect(res.headers.get("etag")).toBe(CURRENT);
    expect(res.headers.get("last-modified")).toBe(AT);
    const body = (await res.json()) as { status: number; error: string };
    expect(body.status).toBe(412);
    expect(body.error).toBe("Precondition Failed");
  });

  // RFC 9110 §8.8.2.1: an origin server "MUST NOT send a Last-Modified date that is later than
  // the server's time of message origination (Date)".
  it("a Last-Modified in the future goes out as the message's Date on the 412 and the 304", async () => {
    const failed = await send("PUT", "/future/a", { "if-match": '"v1"' });
    expect(failed.status).toBe(412);
    const date = failed.headers.get("date") as string;
    expect(Date.parse(failed.headers.get("last-modified") as string)).toBeLessThanOrEqual(Date.parse(date));
    const current = await send("GET", "/future/a", { "if-none-match": CURRENT });
    expect(current.status).toBe(304);
    expect(Date.parse(current.headers.get("last-modified") as string)).toBeLessThanOrEqual(
      Date.parse(current.headers.get("date") as string),
    );
  });

  it("an invalid lastModified sends no Last-Modified (not 'Invalid Date')", async () => {
    const res = await send("PUT", "/nodate/a", { "if-match": '"v1"' });
    expect(res.status).toBe(412);
    expect(res.headers.get("etag")).toBe(CURRENT);
    expect(res.headers.get("last-modified")).toBeNull();
  });

  it("428 names the missing precondition", async () => {
    reset();
    const res = await send("PATCH", "/strict/a", {});
    expect(((await res.json()) as { message: string }).message).toContain("If-Match");
  });

  it("the handler sees the current validators on res.locals.current", async () => {
    reset();
    const res = await send("PATCH", "/strict/a", { "if-match": CURRENT });
    expect(((await res.json()) as { current: { etag: string } }).current.etag).toBe(CURRENT);
  });

  it("rejects a missing current() at construction", () => {
    expect(() => preconditions({} as never)).toThrow(TypeError);
  });
});

describe("a date precondition sent on two field lines (RFC 9110 §5.3: one list)", () => {
  // node:http sends an array value as one field line per member; fetch would join them into one.
  const twoLines = (method: string, path: string, name: string, values: string[]) =>
    new Promise<number>((resolve, reject) => {
      const req = request(`${server.url}${path}`, { method, headers: { [name]: values } }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on("error", reject);
      req.end();
    });

  // §13.1.4: "A recipient MUST ignore the If-Unmodified-Since header field if the received field
  // value is not a valid HTTP-date (including when the field value appears to be a list of
  // dates)": ignored, the write is unconditional, which required: true refuses.
  it("required: PATCH with If-Unmodified-Since on two lines → 428", async () => {
    reset();
    expect(await twoLines("PATCH", "/strict/a", "if-unmodified-since", [AT, BEFORE])).toBe(428);
  });
  it("PUT with If-Unmodified-Since on two lines (too old, then at) → proceeds, ignored", async () => {
    reset();
    expect(await twoLines("PUT", "/docs/a", "if-unmodified-since", [BEFORE, AT])).toBe(200);
  });
  // §13.1.3: "A recipient MUST ignore If-Modified-Since if [...] the field value has more than one member".
  it("GET If-Modified-Since on two lines (at, then earlier) → 200, ignored", async () => {
    reset();
    expect(await twoLines("GET", "/docs/a", "if-modified-since", [AT, BEFORE])).toBe(200);
  });
});

// RFC 9110 §13.2.1: "a server MUST ignore the conditional request header fields defined by this
// specification when received with a request method that does not involve the selection or
// modification of a selected representation, such as CONNECT, OPTIONS, or TRACE".
describe("OPTIONS through preconditions() (RFC 9110 §13.2.1)", () => {
  it.each([[{ "if-match": '"v1"' }], [{ "if-none-match": "*" }], [{ "if-unmodified-since": BEFORE }]])(
    "OPTIONS /any/a with %j → the handler's 204, preconditions ignored",
    async (headers) => {
      const app = express();
      app.all(
        "/any/:id",
        preconditions({ current: () => ({ etag: CURRENT, lastModified: MODIFIED }) }),
        (_req, res) => void res.status(204).end(),
      );
      app.use(errorHandler({ logger: { error: () => {} } }));
      const s = await listen(app);
      try {
        expect((await fetch(`${s.url}/any/a`, { method: "OPTIONS", headers })).status).toBe(204);
        // The same preconditions on a write are still evaluated.
        expect((await fetch(`${s.url}/any/a`, { method: "DELETE", headers })).status).toBe(412);
      } finally {
        await s.close();
      }
    },
  );
});

describe("evaluatePreconditions (pure)", () => {
  it("no conditional headers → proceed", () => {
    expect(evaluatePreconditions("PUT", {}, { etag: CURRENT })).toBe("proceed");
  });
  it("If-Match on a resource without an ETag → 412", () => {
    expect(evaluatePreconditions("PUT", { "if-match": CURRENT }, { lastModified: MODIFIED })).toBe(412);
  });
  it("If-Match: * on an existing resource without validators → proceed", () => {
    expect(evaluatePreconditions("DELETE", { "if-match": "*" }, {})).toBe("proceed");
  });
});
