import type { IncomingMessage, ServerResponse } from "node:http";
import { errorHandler } from "@svc/errors";
import { negotiate } from "@svc/negotiate";
import { type Listening, listen, rawRequest as raw } from "@svc/test-utils";
import express from "express";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { conditional } from "./conditional.js";
import { representationTag } from "./validators.js";

/** The tag `conditional()` gives a JSON body (RFC 9110 §8.8.3: labelled by its media type). */
const jsonTag = (body: string | Uint8Array) => representationTag("application/json", undefined, body);

import { checkPreconditions, evaluatePreconditions, preconditionFailed } from "./preconditions.js";

// RFC 9110 §8.8.3: entity-tag = [ weak ] opaque-tag, opaque-tag = DQUOTE *etagc DQUOTE,
// etagc = %x21 / %x23-7E / obs-text. A handler's `res.set("ETag", "abc")` is no validator: it
// matched no If-None-Match (`abc` or `"abc"`, never a 304) and no If-Match (a 412 carrying `abc`,
// which no retry can pass), and it went out as it was. conditional() drops it, warns once with
// the code SVC_CONDITIONAL_INVALID_ETAG, and tags the body from its bytes as if the handler had
// set none (RFC 9110 §5.5: a sender generates only field values matching their grammar).
const INVALID = ["abc", "7", '"a b"', "W/abc", 'w/"abc"', '"abc', '"a"b"', '"a", "b"'];
const body = { id: 42, name: "Ada" };
const tagOfBody = jsonTag(JSON.stringify(body));
const big = Array.from({ length: 60 }, (_, i) => ({ ...body, id: i }));

describe("a handler's ETag that is no entity-tag", () => {
  let server: Listening;
  const warnings: { code: string | undefined; message: string }[] = [];
  const onWarning = (w: Error & { code?: string }) => {
    if (w.code?.startsWith("SVC_CONDITIONAL")) warnings.push({ code: w.code, message: w.message });
  };

  beforeAll(async () => {
    process.on("warning", onWarning);
    const app = express();
    app.use(negotiate({ compression: { threshold: 500 } }));
    app.use(conditional());
    app.get("/json", (req, res) => {
      res.set("ETag", String(req.query.tag));
      res.json(body);
    });
    app.get("/big", (req, res) => {
      res.set("ETag", String(req.query.tag));
      res.json(big);
    });
    app.get("/number", (_req, res) => {
      res.setHeader("ETag", 7);
      res.json(body);
    });
    app.get("/weak", (_req, res) => {
      res.set("ETag", 'W/"v7"');
      res.json(body);
    });
    app.get("/stream", (req, res) => {
      res.setHeader("ETag", String(req.query.tag));
      res.setHeader("Content-Type", "text/plain");
      res.write("a");
      res.end("b");
    });
    app.get("/head-by-hand", (req, res) => {
      res.setHeader("ETag", "abc");
      res.setHeader("Content-Type", "application/json");
      if (req.method === "HEAD") return void res.end();
      res.end(JSON.stringify(body));
    });
    app.get("/missing", (_req, res) => {
      res.set("ETag", "abc");
      res.status(404).json({ error: "no" });
    });
    app.post("/create", (_req, res) => {
      res.set("ETag", "abc");
      res.status(201).end();
    });
    app.use(errorHandler({ logger: { error: () => {} } }));
    server = await listen(app);
  });

  afterAll(async () => {
    process.off("warning", onWarning);
    await server.close();
  });

  const url = (path: string, tag: string) => `${server.url}${path}?tag=${encodeURIComponent(tag)}`;

  it.each(INVALID)("ETag %s → not sent; the body gets its strong tag instead", async (tag) => {
    const res = await raw(url("/json", tag), "GET", { "accept-encoding": "identity" });
    expect(res.status).toBe(200);
    expect(res.headers.etag).toBe(tagOfBody);
    const head = await raw(url("/json", tag), "HEAD", { "accept-encoding": "identity" });
    expect(head.headers.etag).toBe(tagOfBody);
  });

  it.each(INVALID)("ETag %s → revalidation and If-Match work on the tag sent", async (tag) => {
    const identity = { "accept-encoding": "identity" };
    // The tag sent earns its 304; the invalid value, quoted or not, names nothing current.
    const fresh = await raw(url("/json", tag), "GET", { ...identity, "if-none-match": tagOfBody });
    expect(fresh.status).toBe(304);
    expect(fresh.headers.etag).toBe(tagOfBody);
    for (const named of ["abc", '"abc"']) {
      const stale = await raw(url("/json", tag), "GET", { ...identity, "if-none-match": named });
      expect(stale.status).toBe(200);
      // A 412 carries the tag a retry can pass (RFC 9110 §13.1.1), not the invalid one.
      const failed = await raw(url("/json", tag), "GET", { ...identity, "if-match": named });
      expect(failed.status).toBe(412);
      expect(failed.headers.etag).toBe(tagOfBody);
    }
    const passed = await raw(url("/json", tag), "GET", { ...identity, "if-match": tagOfBody });
    expect(passed.status).toBe(200);
  });

  it("a coded response gets the weak form of the computed tag, and its 304 too", async () => {
    const gzip = { "accept-encoding": "gzip" };
    const tag = jsonTag(JSON.stringify(big));
    const gz = await raw(url("/big", "abc"), "GET", gzip);
    expect(gz.headers["content-encoding"]).toBe("gzip");
    expect(gz.headers.etag).toBe(`W/${tag}`);
    const fresh = await raw(url("/big", "abc"), "GET", { ...gzip, "if-none-match": `W/${tag}` });
    expect(fresh.status).toBe(304);
    expect(fresh.headers.etag).toBe(`W/${tag}`);
    // Small, under the 500-byte threshold: uncoded, strong.
    expect((await raw(url("/json", "abc"), "GET", gzip)).headers.etag).toBe(tagOfBody);
  });

  it("a number (res.setHeader('ETag', 7)) is no entity-tag either", async () => {
    const res = await raw(`${server.url}/number`, "GET", { "accept-encoding": "identity" });
    expect(res.headers.etag).toBe(tagOfBody);
  });

  it("a valid weak tag of the handler is kept", async () => {
    const res = await raw(`${server.url}/weak`, "GET", {});
    expect(res.headers.etag).toBe('W/"v7"');
    expect((await raw(`${server.url}/weak`, "GET", { "if-none-match": '"v7"' })).status).toBe(304);
  });

  it("a streamed body: the invalid tag is not sent, and no tag stands in for it", async () => {
    const res = await raw(url("/stream", "abc"), "GET", { "accept-encoding": "identity" });
    expect(res.status).toBe(200);
    expect(res.body.toString()).toBe("ab");
    expect(res.headers.etag).toBeUndefined();
    const again = await raw(url("/stream", "abc"), "GET", {
      "accept-encoding": "identity",
      "if-none-match": "abc",
    });
    expect(again.status).toBe(200);
    const ifMatch = await raw(url("/stream", "abc"), "GET", {
      "accept-encoding": "identity",
      "if-match": "abc",
    });
    expect(ifMatch.status).toBe(412);
    expect(ifMatch.headers.etag).toBeUndefined();
  });

  it("a HEAD ended without content, a 404 and a 201 of a POST: not sent either", async () => {
    const head = await raw(`${server.url}/head-by-hand`, "HEAD", {});
    expect(head.status).toBe(200);
    expect(head.headers.etag).toBeUndefined();
    const missing = await raw(`${server.url}/missing`, "GET", {});
    expect(missing.status).toBe(404);
    expect(missing.headers.etag).toBeUndefined();
    const created = await raw(`${server.url}/create`, "POST", {});
    expect(created.status).toBe(201);
    expect(created.headers.etag).toBeUndefined();
  });

  it("warns once, with the stable code SVC_CONDITIONAL_INVALID_ETAG, naming the value", () => {
    expect(warnings).toHaveLength(1);
    expect(warnings[0]?.code).toBe("SVC_CONDITIONAL_INVALID_ETAG");
    expect(warnings[0]?.message).toMatch(/is not an entity-tag/);
    expect(warnings[0]?.message).toMatch(/RFC 9110 §8\.8\.3/);
  });
});

describe("conditional() with plain node:http: a handler's unquoted tag", () => {
  it("is replaced by the tag of the bytes sent; If-None-Match of that → 304", async () => {
    const revalidate = conditional();
    const onWarning = () => {};
    process.on("warning", onWarning);
    const server = await listen((req, res) =>
      revalidate(req, res, () => {
        res.setHeader("ETag", "7");
        res.setHeader("Content-Type", "application/json");
        res.end(JSON.stringify(body));
      }),
    );
    try {
      const res = await raw(server.url, "GET", {});
      expect(res.headers.etag).toBe(tagOfBody);
      expect((await raw(server.url, "GET", { "if-none-match": tagOfBody })).status).toBe(304);
      expect((await raw(server.url, "GET", { "if-none-match": "7" })).status).toBe(200);
    } finally {
      process.off("warning", onWarning);
      await server.close();
    }
  });
});

describe("the core refuses a current tag that is no entity-tag (TypeError, never a 412 carrying it)", () => {
  const code = { code: "ERR_SVC_CONDITIONAL_INVALID_ETAG" };

  it.each([
    ["GET", { "if-none-match": "7" }],
    ["GET", { "if-none-match": '"7"' }],
    ["GET", { "if-match": "7" }],
    ["PUT", { "if-match": '"7"' }],
    ["PUT", { "if-unmodified-since": "Thu, 01 Jan 2026 00:00:00 GMT" }],
  ])("evaluatePreconditions(%s, %j, { etag: '7' }) throws", (method, headers) => {
    expect(() => evaluatePreconditions(method, headers, { etag: "7" })).toThrow(TypeError);
    expect(() => evaluatePreconditions(method, headers, { etag: "7" })).toThrow(
      expect.objectContaining(code),
    );
  });

  it("an unconditional request compares no tag: proceed, as checkPreconditions does", async () => {
    expect(evaluatePreconditions("GET", {}, { etag: "7" })).toBe("proceed");
    expect(await checkPreconditions({ method: "GET", headers: {} }, { etag: "7" })).toBe("proceed");
  });

  it("checkPreconditions and preconditionFailed throw the same TypeError", async () => {
    await expect(
      checkPreconditions({ method: "PUT", headers: { "if-match": "7" } }, { etag: "7" }),
    ).rejects.toThrow(expect.objectContaining(code));
    expect(() => preconditionFailed({ etag: '"a b"' })).toThrow(expect.objectContaining(code));
    expect(preconditionFailed({ etag: 'W/"7"' }).headers).toMatchObject({ ETag: 'W/"7"' });
  });
});

// The same rule on a head the handler writes itself: `res.writeHead(status, headers)` of a non-2xx
// or of a write (POST/PUT/PATCH/DELETE) went out at once, its ETag (from the headers given, as an
// object or Node's flat array, or set before with setHeader) never checked; `abc` reached clients.
describe("a head the handler writes with res.writeHead: the ETag rule of res.end", () => {
  const FORMS = ["object", "array", "reason", "setHeader"] as const;
  const CASES = [
    ["GET", 404],
    ["HEAD", 404],
    ["GET", 304],
    ["GET", 412],
    ["POST", 201],
    ["PUT", 200],
    ["PATCH", 200],
    ["DELETE", 204],
  ] as const;
  const BAD = ["abc", "7", '"a b"', "W/abc", 'w/"abc"', '"a", "b"'];
  const VALID = ['"v7"', 'W/"v7"', '""', '"a,b"', '"0-2jmj7l5rSw0yVb/vlWAYkK/YBwk"'];
  const noBody = (method: string, status: number) => method === "HEAD" || status === 204 || status === 304;

  const revalidate = conditional();
  function handle(req: IncomingMessage, res: ServerResponse): void {
    const q = new URL(req.url ?? "/", "http://x").searchParams;
    const status = Number(q.get("status"));
    const tag = q.get("tag") ?? "";
    const fields = { "Content-Type": "text/plain", Location: "/things/1" };
    const text = noBody(req.method ?? "", status) ? undefined : "some text";
    switch (q.get("form")) {
      case "object":
        res.writeHead(status, { ...fields, ETag: tag });
        break;
      case "array":
        res.writeHead(status, ["Content-Type", "text/plain", "ETag", tag, "Location", "/things/1"]);
        break;
      case "reason":
        res.writeHead(status, "As Said", { ...fields, ETag: tag });
        break;
      default:
        res.setHeader("ETag", tag);
        res.setHeader("Content-Type", "text/plain");
        res.setHeader("Location", "/things/1");
        res.writeHead(status);
    }
    res.end(text);
  }

  let node: Listening;
  let app: Listening;
  let warned = 0;
  const onWarning = (w: Error & { code?: string }) => {
    if (w.code === "SVC_CONDITIONAL_INVALID_ETAG") warned++;
  };
  beforeAll(async () => {
    process.on("warning", onWarning);
    node = await listen((req, res) => revalidate(req, res, () => handle(req, res)));
    const a = express();
    a.use(conditional());
    a.use(handle);
    app = await listen(a);
  });
  afterAll(async () => {
    process.off("warning", onWarning);
    await node.close();
    await app.close();
  });

  const rows = (["node:http", "express"] as const).flatMap((on) =>
    FORMS.flatMap((form) => CASES.map(([method, status]) => [on, method, form, status] as const)),
  );
  const ask = (on: string, method: string, form: string, status: number, tag: string) => {
    const base = on === "express" ? app.url : node.url;
    const query = new URLSearchParams({ form, status: String(status), tag });
    return raw(`${base}/things?${query}`, method, {});
  };

  it.each(rows)(
    "%s: %s → writeHead(%s form, status %d) with an ETag that is no entity-tag → not sent",
    async (on, method, form, status) => {
      for (const tag of BAD) {
        const res = await ask(on, method, form, status, tag);
        expect(res.status, tag).toBe(status);
        expect(res.headers.etag, tag).toBeUndefined();
        // Only the ETag goes; the rest of the head and the body are the handler's.
        expect(res.headers.location, tag).toBe("/things/1");
        if (status !== 304) expect(res.headers["content-type"], tag).toBe("text/plain");
        expect(res.body.toString(), tag).toBe(noBody(method, status) ? "" : "some text");
      }
    },
  );

  it.each(rows)(
    "%s: %s → writeHead(%s form, status %d) with a valid ETag → sent exactly as given",
    async (on, method, form, status) => {
      for (const tag of VALID) {
        const res = await ask(on, method, form, status, tag);
        expect(res.status, tag).toBe(status);
        expect(res.headers.etag, tag).toBe(tag);
        expect(res.headers.location, tag).toBe("/things/1");
      }
    },
  );

  it("warned once per conditional(): the node:http one and the Express one", () => {
    expect(warned).toBe(2);
  });
});

describe("writeHead of a redirect with a name given twice in Node's flat array", () => {
  it("POST → writeHead(303, [Location, Set-Cookie a=1, Set-Cookie b=2]) → both cookies, as Node sends them", async () => {
    const revalidate = conditional();
    const server = await listen((req, res) =>
      revalidate(req, res, () => {
        res.writeHead(303, ["Location", "/", "Set-Cookie", "a=1", "Set-Cookie", "b=2", "ETag", '"v1"']).end();
      }),
    );
    try {
      const res = await raw(server.url, "POST", {});
      expect(res.status).toBe(303);
      expect(res.headers["set-cookie"]).toEqual(["a=1", "b=2"]);
      expect(res.headers.etag).toBe('"v1"');
    } finally {
      await server.close();
    }
  });
});
