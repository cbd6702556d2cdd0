import { Readable } from "node:stream";
import { gunzipSync } from "node:zlib";
import { errorHandler, notFound } from "@svc/errors/express";
import { createPipeline, HttpError, reply } from "@svc/kernel";
import { expressAdapter } from "@svc/kernel/express";
import { compression, json, representations, xml } from "@svc/negotiate";
import { type Listening, listen, rawRequest as raw } from "@svc/test-utils";
import express from "express";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { formatCacheControl, representationTag, type ValidatorsOptions, validators } from "./index.js";

// validators() through a listening Express server (Express 5 here, Express 4 in the
// "@svc/conditional (express 4)" project): the 200's strong tag of its bytes, 304 and 412 for GET
// and HEAD, the default cache policy, and writes' preconditions through svc.preconditions.

/** The tag of a JSON body (RFC 9110 §8.8.3: labelled by its media type). */
const jsonTag = (body: string | Uint8Array) => representationTag("application/json", undefined, body);

const employee = { id: 42, name: "Ada", department: "R&D", salary: 1000 };
const big = Array.from({ length: 60 }, (_, i) => ({ ...employee, id: i }));
const modified = new Date("2026-01-02T03:04:05Z");
const quiet = { logger: { error: () => {} } };

/** A streamed body, written in chunks (no length: coded for a gzip client). */
const chunks = (...parts: string[]) => Readable.from(parts.map((p) => Buffer.from(p)));

function app(withNegotiate: boolean, options: ValidatorsOptions = {}) {
  const svc = expressAdapter(
    createPipeline({
      validators: validators(options),
      ...(withNegotiate
        ? {
            representations: representations({ offers: [json, xml] }),
            coding: compression({ threshold: 500 }),
          }
        : {}),
    }),
  );
  const a = express();
  a.use(svc.prepare);
  a.get(
    "/employees/42",
    svc.handle(() =>
      reply(employee, { lastModified: modified, headers: { "Content-Location": "/employees/42" } }),
    ),
  );
  a.get(
    "/employees",
    svc.handle(() => big),
  );
  a.get(
    "/countries",
    svc.handle(() =>
      reply(["DE", "FR"], {
        headers: {
          "Cache-Control": formatCacheControl({ visibility: "public", maxAge: 86400 }),
          Expires: "Thu, 01 Jan 2037 00:00:00 GMT",
        },
      }),
    ),
  );
  a.get(
    "/balance",
    svc.handle(() =>
      reply({ balance: 5 }, { headers: { "Cache-Control": formatCacheControl({ noStore: true }) } }),
    ),
  );
  a.get(
    "/own-tag",
    svc.handle(() => reply(employee, { headers: { ETag: '"v7"' } })),
  );
  a.get(
    "/no-body",
    svc.handle(() => reply.empty({ status: 200, lastModified: modified })),
  );
  // A streamed export with its own tag (no length, so coded for a gzip client).
  a.get(
    "/export",
    svc.handle(() =>
      reply.bytes(chunks("id,name\n", "42,Ada\n"), "text/csv; charset=utf-8", {
        headers: { ETag: '"export-1"' },
      }),
    ),
  );
  a.get(
    "/comma-tag",
    svc.handle(() => reply(employee, { headers: { ETag: '"a,b"' } })),
  );
  a.use(notFound());
  a.use(errorHandler(quiet));
  return a;
}

let plain: Listening;
let full: Listening;
beforeAll(async () => {
  plain = await listen(app(false));
  full = await listen(app(true));
});
afterAll(async () => {
  await plain.close();
  await full.close();
});

describe("ETag", () => {
  it("a reply's data → the strong tag of the bytes sent", async () => {
    const res = await raw(`${plain.url}/employees/42`, "GET", {});
    expect(res.headers.etag).toBe(jsonTag(JSON.stringify(employee)));
    expect(res.headers.etag).not.toMatch(/^W\//);
  });

  it("JSON and XML of one resource get different strong tags", async () => {
    const jsonRes = await raw(`${full.url}/employees/42`, "GET", { accept: "application/json" });
    const xmlRes = await raw(`${full.url}/employees/42`, "GET", { accept: "application/xml" });
    expect(jsonRes.headers.etag).toBe(jsonTag(jsonRes.body));
    expect(xmlRes.headers.etag).toBe(representationTag("application/xml", undefined, xmlRes.body));
    expect(jsonRes.headers.etag).not.toBe(xmlRes.headers.etag);
  });

  it("a reply's own ETag → kept, and If-None-Match on it → 304", async () => {
    for (const server of [plain, full]) {
      const res = await raw(`${server.url}/own-tag`, "GET", { "accept-encoding": "identity" });
      expect(res.headers.etag).toBe('"v7"');
      const again = await raw(`${server.url}/own-tag`, "GET", { "if-none-match": '"v7"' });
      expect(again.status).toBe(304);
    }
  });

  it("gzip-coded response → weak tag of the identity bytes, never the strong one", async () => {
    const identity = await raw(`${full.url}/employees`, "GET", { "accept-encoding": "identity" });
    const gz = await raw(`${full.url}/employees`, "GET", { "accept-encoding": "gzip" });
    expect(gz.headers["content-encoding"]).toBe("gzip");
    expect(gunzipSync(gz.body).equals(identity.body)).toBe(true);
    expect(identity.headers.etag).toMatch(/^"/);
    expect(gz.headers.etag).toBe(`W/${identity.headers.etag}`);
  });

  it("HEAD carries the same validators as GET (coded and uncoded)", async () => {
    for (const ae of ["gzip", "identity"]) {
      const get = await raw(`${full.url}/employees`, "GET", { "accept-encoding": ae });
      const head = await raw(`${full.url}/employees`, "HEAD", { "accept-encoding": ae });
      expect(head.status).toBe(200);
      expect(head.body.length).toBe(0);
      expect(head.headers.etag).toBe(get.headers.etag);
    }
    const plainHead = await raw(`${plain.url}/employees/42`, "HEAD", {});
    expect(plainHead.headers.etag).toBe(jsonTag(JSON.stringify(employee)));
  });
});

describe("If-None-Match / If-Modified-Since → 304 (RFC 9110 §13.1.2, §13.1.3, §15.4.5)", () => {
  for (const [name, server] of [
    ["JSON only", () => plain],
    ["representations with compression", () => full],
  ] as const) {
    describe(name, () => {
      const tag = async (headers: Record<string, string> = {}) =>
        (await raw(`${server().url}/employees/42`, "GET", headers)).headers.etag as string;

      it("If-None-Match: current tag → 304, no body, validators and cache headers kept", async () => {
        const etag = await tag();
        const res = await raw(`${server().url}/employees/42`, "GET", { "if-none-match": etag });
        expect(res.status).toBe(304);
        expect(res.body.length).toBe(0);
        expect(res.headers.etag).toBe(etag);
        expect(res.headers["cache-control"]).toBe("no-cache");
        expect(res.headers["content-location"]).toBe("/employees/42");
        expect(res.headers.date).toBeDefined();
        expect(res.headers["content-type"]).toBeUndefined();
        expect(res.headers["content-length"]).toBeUndefined();
      });

      it.each(["no-cache", "max-age=0", "no-cache, no-store"])(
        "If-None-Match: current tag with Cache-Control: %s (as fetch sends it) → 304",
        async (cacheControl) => {
          // RFC 9110 §13.1.2: an origin server MUST evaluate If-None-Match; RFC 9111 §5.2.1.4: a
          // request's no-cache asks for validation at the origin, which a 304 is.
          const etag = await tag();
          const res = await raw(`${server().url}/employees/42`, "GET", {
            "if-none-match": etag,
            "cache-control": cacheControl,
            pragma: "no-cache",
          });
          expect(res.status).toBe(304);
        },
      );

      it("If-None-Match: list containing the tag → 304", async () => {
        const etag = await tag();
        const res = await raw(`${server().url}/employees/42`, "GET", { "if-none-match": `"nope", ${etag}` });
        expect(res.status).toBe(304);
      });

      it("If-None-Match: W/ form of the strong tag → 304 (weak comparison)", async () => {
        const etag = await tag();
        const res = await raw(`${server().url}/employees/42`, "GET", { "if-none-match": `W/${etag}` });
        expect(res.status).toBe(304);
      });

      it("If-None-Match: * → 304", async () => {
        expect((await raw(`${server().url}/employees/42`, "GET", { "if-none-match": "*" })).status).toBe(304);
      });

      it("If-None-Match: other tag → 200 with body", async () => {
        const res = await raw(`${server().url}/employees/42`, "GET", { "if-none-match": '"other"' });
        expect(res.status).toBe(200);
        expect(JSON.parse(res.body.toString())).toEqual(employee);
      });

      it("If-None-Match: garbage → 200, never 500", async () => {
        for (const v of ["garbage", "", 'W/"', ",,,"]) {
          expect((await raw(`${server().url}/employees/42`, "GET", { "if-none-match": v })).status).toBe(200);
        }
      });

      it("If-Modified-Since: at Last-Modified → 304", async () => {
        const res = await raw(`${server().url}/employees/42`, "GET", {
          "if-modified-since": modified.toUTCString(),
        });
        expect(res.status).toBe(304);
        expect(res.headers.etag).toBeDefined();
      });

      it("If-Modified-Since: before Last-Modified → 200", async () => {
        const res = await raw(`${server().url}/employees/42`, "GET", {
          "if-modified-since": new Date(modified.getTime() - 1000).toUTCString(),
        });
        expect(res.status).toBe(200);
      });

      it("If-Modified-Since is ignored when If-None-Match is present and does not match", async () => {
        const res = await raw(`${server().url}/employees/42`, "GET", {
          "if-none-match": '"other"',
          "if-modified-since": modified.toUTCString(),
        });
        expect(res.status).toBe(200);
      });

      it("If-Modified-Since: not a date → 200", async () => {
        expect(
          (await raw(`${server().url}/employees/42`, "GET", { "if-modified-since": "yesterday" })).status,
        ).toBe(200);
      });

      // RFC 9110 §13.1.3: "A recipient MUST ignore If-Modified-Since if the received field value
      // is not a valid HTTP-date" (§5.6.7), however Date.parse would read it.
      for (const value of ["2099-01-01", "2026-06-01T00:00:00Z", "2099", "Tue, 31 Feb 2026 03:04:05 GMT"]) {
        it(`If-Modified-Since: ${value} (not an HTTP-date) → 200`, async () => {
          const res = await raw(`${server().url}/employees/42`, "GET", { "if-modified-since": value });
          expect(res.status).toBe(200);
        });
      }

      for (const value of ["Friday, 02-Jan-26 03:04:05 GMT", "Fri Jan  2 03:04:05 2026"]) {
        it(`If-Modified-Since: ${value} (an obsolete HTTP-date format) at Last-Modified → 304`, async () => {
          const res = await raw(`${server().url}/employees/42`, "GET", { "if-modified-since": value });
          expect(res.status).toBe(304);
        });
      }

      // RFC 9110 §5.3: field lines of one name are one list; §13.1.3: "A recipient MUST ignore the
      // If-Modified-Since header field if [...] the field value has more than one member".
      it("If-Modified-Since on two lines (at Last-Modified, then earlier) → 200, a list is ignored", async () => {
        const earlier = new Date(modified.getTime() - 86_400_000).toUTCString();
        const res = await raw(`${server().url}/employees/42`, "GET", {
          "if-modified-since": [modified.toUTCString(), earlier],
        });
        expect(res.status).toBe(200);
      });

      it("If-None-Match: (empty) with If-Modified-Since at Last-Modified → 200, If-Modified-Since ignored", async () => {
        const res = await raw(`${server().url}/employees/42`, "GET", {
          "if-none-match": "",
          "if-modified-since": modified.toUTCString(),
        });
        expect(res.status).toBe(200);
      });

      it("If-None-Match: * on a 200 without a body or ETag → 304 (the representation exists)", async () => {
        expect((await raw(`${server().url}/no-body`, "GET", {})).status).toBe(200);
        const res = await raw(`${server().url}/no-body`, "GET", { "if-none-match": "*" });
        expect(res.status).toBe(304);
      });

      it("HEAD: If-None-Match / If-Modified-Since → 304, as GET", async () => {
        // RFC 9110 §13.1.2: "the origin server MUST NOT perform the requested method if the
        // condition evaluates to false; instead, the origin server MUST respond with either a) the
        // 304 (Not Modified) status code if the request method is GET or HEAD".
        const url = `${server().url}/employees/42`;
        const etag = await tag();
        expect((await raw(url, "GET", { "if-none-match": etag })).status).toBe(304);
        const head = await raw(url, "HEAD", { "if-none-match": etag });
        expect(head.status).toBe(304);
        expect(head.headers.etag).toBe(etag);
        expect(head.headers["content-length"]).toBeUndefined();
        expect((await raw(url, "HEAD", { "if-none-match": '"other"' })).status).toBe(200);
        const since = await raw(url, "HEAD", { "if-modified-since": modified.toUTCString() });
        expect(since.status).toBe(304);
      });
    });
  }

  it("compression: 304 for a gzip client keeps the coded response's weak tag and Vary", async () => {
    const gz = await raw(`${full.url}/employees`, "GET", { "accept-encoding": "gzip" });
    expect(gz.headers.etag).toMatch(/^W\//);
    const res = await raw(`${full.url}/employees`, "GET", {
      "accept-encoding": "gzip",
      "if-none-match": gz.headers.etag as string,
    });
    expect(res.status).toBe(304);
    expect(res.headers.etag).toBe(gz.headers.etag);
    expect(res.headers.vary).toBe(gz.headers.vary);
    expect(res.headers["content-encoding"]).toBeUndefined();
    expect(res.body.length).toBe(0);
  });

  // RFC 9110 §15.4.5: the 304 carries the ETag "that would have been sent in a 200 (OK) response
  // to the same request"; for a HEAD, that is the HEAD's 200, coded like its GET (§9.3.2).
  it.each(["GET", "HEAD"])(
    "%s of a streamed export revalidated by a gzip client → 304 with the weak tag its 200 carries",
    async (method) => {
      const url = `${full.url}/export`;
      const ok = await raw(url, method, { "accept-encoding": "gzip" });
      expect(ok.headers["content-encoding"]).toBe("gzip");
      expect(ok.headers.etag).toBe('W/"export-1"');
      const res = await raw(url, method, { "accept-encoding": "gzip", "if-none-match": '"export-1"' });
      expect(res.status).toBe(304);
      expect(res.headers.etag).toBe(ok.headers.etag);
    },
  );

  it.each(["GET", "HEAD"])(
    "%s of a streamed export → the default Cache-Control, as its 304",
    async (method) => {
      for (const server of [plain, full]) {
        const ok = await raw(`${server.url}/export`, method, {});
        expect(ok.status).toBe(200);
        expect(ok.headers["cache-control"]).toBe("no-cache");
        const notModified = await raw(`${server.url}/export`, method, { "if-none-match": '"export-1"' });
        expect(notModified.status).toBe(304);
        expect(notModified.headers["cache-control"]).toBe("no-cache");
      }
    },
  );

  it("the XML tag does not revalidate the JSON representation", async () => {
    const xmlRes = await raw(`${full.url}/employees/42`, "GET", { accept: "application/xml" });
    const res = await raw(`${full.url}/employees/42`, "GET", {
      "if-none-match": xmlRes.headers.etag as string,
    });
    expect(res.status).toBe(200);
  });
});

describe("If-Match / If-Unmodified-Since on GET and HEAD → 412 (RFC 9110 §13.1.1, §13.1.4, §13.2.2)", () => {
  for (const [name, server] of [
    ["JSON only", () => plain],
    ["representations with compression", () => full],
  ] as const) {
    describe(name, () => {
      const get = (headers: Record<string, string>, method = "GET", path = "/employees/42") =>
        raw(`${server().url}${path}`, method, headers);
      const tag = async () => (await get({})).headers.etag as string;

      it("If-Match: other tag → 412 error record with the current validators, no-store", async () => {
        const etag = await tag();
        const res = await get({ "if-match": '"other"' });
        expect(res.status).toBe(412);
        expect(res.headers["content-type"]).toBe("application/json; charset=utf-8");
        expect(res.headers["cache-control"]).toBe("no-store");
        expect(res.headers.vary).toMatch(/\bAccept\b/);
        expect(res.headers.etag).toBe(etag);
        expect(res.headers["last-modified"]).toBe(modified.toUTCString());
        expect(res.headers["content-location"]).toBeUndefined();
        expect(res.headers["content-encoding"]).toBeUndefined();
        expect(Number(res.headers["content-length"])).toBe(res.body.length);
        expect(JSON.parse(res.body.toString())).toMatchObject({
          status: 412,
          error: "Precondition Failed",
          path: "/employees/42",
        });
      });

      it("If-Match: current tag, a list holding it, or * → 200 with body", async () => {
        const etag = await tag();
        for (const value of [etag, `"other", ${etag}`, "*"]) {
          const res = await get({ "if-match": value });
          expect(res.status).toBe(200);
          expect(JSON.parse(res.body.toString())).toEqual(employee);
        }
      });

      it("If-Match: W/ form of the current tag → 412 (strong comparison, §8.8.3.2)", async () => {
        expect((await get({ "if-match": `W/${await tag()}` })).status).toBe(412);
      });

      it("If-Match: garbage or empty → 412, never 500", async () => {
        for (const v of ["garbage", "", ",,,", 'W/"'])
          expect((await get({ "if-match": v })).status).toBe(412);
      });

      it("If-Match: other tag with If-None-Match: current tag → 412 (If-Match first, §13.2.2)", async () => {
        const etag = await tag();
        expect((await get({ "if-match": '"other"', "if-none-match": etag })).status).toBe(412);
        expect((await get({ "if-match": etag, "if-none-match": etag })).status).toBe(304);
      });

      it("HEAD with If-Match: other tag → 412 without a body", async () => {
        const res = await get({ "if-match": '"other"' }, "HEAD");
        expect(res.status).toBe(412);
        expect(res.body.length).toBe(0);
      });

      it("If-Match: other tag on a reply's own tag → 412", async () => {
        expect((await get({ "if-match": '"v1"' }, "GET", "/own-tag")).status).toBe(412);
        expect(
          (await get({ "if-match": '"v7"', "accept-encoding": "identity" }, "GET", "/own-tag")).status,
        ).toBe(200);
      });

      it("Accept: application/problem+json → the 412 as problem details", async () => {
        const res = await get({
          "if-match": '"other"',
          accept: "application/problem+json, application/json;q=0.5",
        });
        expect(res.status).toBe(412);
        expect(res.headers["content-type"]).toBe("application/problem+json; charset=utf-8");
        expect(JSON.parse(res.body.toString())).toMatchObject({ status: 412, code: "precondition_failed" });
      });

      it("If-Unmodified-Since: before Last-Modified → 412; at it, or not a date → 200", async () => {
        const before = new Date(modified.getTime() - 1000).toUTCString();
        expect((await get({ "if-unmodified-since": before })).status).toBe(412);
        expect((await get({ "if-unmodified-since": modified.toUTCString() })).status).toBe(200);
        expect((await get({ "if-unmodified-since": "2000-01-01" })).status).toBe(200);
      });

      // RFC 9110 §13.1.4: "A recipient MUST ignore the If-Unmodified-Since header field if the
      // received field value is not a valid HTTP-date (including when the field value appears to
      // be a list of dates)", which two field lines make it (§5.3).
      it("If-Unmodified-Since on two lines (earlier, then at Last-Modified) → 200, a list is ignored", async () => {
        const before = new Date(modified.getTime() - 1000).toUTCString();
        const res = await raw(`${server().url}/employees/42`, "GET", {
          "if-unmodified-since": [before, modified.toUTCString()],
        });
        expect(res.status).toBe(200);
      });

      it("If-Unmodified-Since is ignored when If-Match is present (§13.1.4)", async () => {
        const before = new Date(modified.getTime() - 1000).toUTCString();
        const res = await get({ "if-match": await tag(), "if-unmodified-since": before });
        expect(res.status).toBe(200);
      });

      it("If-Match on a 404 → 404: preconditions only apply to a 2xx (§13.2.1)", async () => {
        expect((await get({ "if-match": '"other"' }, "GET", "/missing")).status).toBe(404);
      });
    });
  }

  it("If-Match with the weak tag of a gzip response → 412: a weak tag never matches strongly", async () => {
    const gz = await raw(`${full.url}/employees`, "GET", { "accept-encoding": "gzip" });
    expect(gz.headers.etag).toMatch(/^W\//);
    const res = await raw(`${full.url}/employees`, "GET", {
      "accept-encoding": "gzip",
      "if-match": gz.headers.etag as string,
    });
    expect(res.status).toBe(412);
    expect(res.headers["content-encoding"]).toBeUndefined();
    expect(JSON.parse(res.body.toString()).status).toBe(412);
  });
});

describe("If-None-Match with a comma inside an entity tag (RFC 9110 §8.8.3 etagc)", () => {
  it('If-None-Match: "a,b" on ETag: "a,b" → 304; "a" or "b" alone → 200', async () => {
    for (const server of [plain, full]) {
      expect((await raw(`${server.url}/comma-tag`, "GET", { "if-none-match": '"a,b"' })).status).toBe(304);
      expect((await raw(`${server.url}/comma-tag`, "GET", { "if-none-match": '"x", W/"a,b"' })).status).toBe(
        304,
      );
      expect((await raw(`${server.url}/comma-tag`, "GET", { "if-none-match": '"a"' })).status).toBe(200);
      expect((await raw(`${server.url}/comma-tag`, "GET", { "if-none-match": '"b"' })).status).toBe(200);
    }
  });
});

describe("cache policy", () => {
  it("a reply's Cache-Control from formatCacheControl({ visibility: public, maxAge }) → kept on the 304 with Expires", async () => {
    const first = await raw(`${plain.url}/countries`, "GET", {});
    expect(first.headers["cache-control"]).toBe("public, max-age=86400");
    const res = await raw(`${plain.url}/countries`, "GET", { "if-none-match": first.headers.etag as string });
    expect(res.status).toBe(304);
    expect(res.headers["cache-control"]).toBe("public, max-age=86400");
    expect(res.headers.expires).toBe("Thu, 01 Jan 2037 00:00:00 GMT");
  });

  it("formatCacheControl({ noStore }) → no-store", async () => {
    expect((await raw(`${plain.url}/balance`, "GET", {})).headers["cache-control"]).toBe("no-store");
  });

  it("a response that sets nothing → the documented default, no-cache", async () => {
    expect((await raw(`${plain.url}/employees/42`, "GET", {})).headers["cache-control"]).toBe("no-cache");
  });

  it("errors get no-store from the error handler, not the default", async () => {
    const res = await raw(`${plain.url}/missing`, "GET", {});
    expect(res.status).toBe(404);
    expect(res.headers["cache-control"]).toBe("no-store");
    expect(res.headers.etag).toBeUndefined();
  });
});

describe("representations + validators + svc.preconditions: a lost-update round trip", () => {
  let server: Listening;
  let doc = { id: 1, name: "Ada" };
  beforeAll(async () => {
    const svc = expressAdapter(
      createPipeline({
        representations: representations({ offers: [json] }),
        validators: validators({ required: true }),
      }),
    );
    const a = express();
    a.use(express.json());
    a.use(svc.prepare);
    a.get(
      "/doc",
      svc.handle(() => doc),
    );
    a.put(
      "/doc",
      svc.handle(async (req: express.Request) => {
        await svc.preconditions(req, { data: doc });
        doc = req.body as typeof doc;
        return doc;
      }),
    );
    a.use(errorHandler(quiet));
    server = await listen(a);
  });
  afterAll(() => server.close());

  it("PUT 200 carries the strong tag of the new representation, usable for the next If-Match", async () => {
    const first = await fetch(`${server.url}/doc`);
    const put = await fetch(`${server.url}/doc`, {
      method: "PUT",
      headers: { "content-type": "application/json", "if-match": first.headers.get("etag") as string },
      body: JSON.stringify({ id: 1, name: "Barbara" }),
    });
    expect(put.status).toBe(200);
    expect(put.headers.get("etag")).toBe(jsonTag(JSON.stringify({ id: 1, name: "Barbara" })));
    expect(put.headers.get("cache-control")).toBeNull();
  });

  it("GET tag → PUT If-Match succeeds once, the second writer with the same tag gets 412", async () => {
    const get = await fetch(`${server.url}/doc`);
    const etag = get.headers.get("etag") as string;
    expect(etag).toMatch(/^"/);
    const put = (name: string) =>
      fetch(`${server.url}/doc`, {
        method: "PUT",
        headers: { "content-type": "application/json", "if-match": etag },
        body: JSON.stringify({ id: 1, name }),
      });
    expect((await put("Grace")).status).toBe(200);
    expect((await put("Linus")).status).toBe(412);
    expect(doc.name).toBe("Grace");
    const unconditional = await fetch(`${server.url}/doc`, {
      method: "PUT",
      headers: { "content-type": "application/json" },
      body: "{}",
    });
    expect(unconditional.status).toBe(428);
  });
});

// RFC 9110 §13.2.1: "A server MUST ignore all received preconditions if its response to the same
// request without those conditions, prior to processing the request content, would have been a
// status code other than a 2xx (Successful) or 412 (Precondition Failed)".
describe("a write to a resource that does not exist: its 404, whatever the preconditions say", () => {
  let server: Listening;
  const accounts = new Map<string, { id: string; balance: number }>([["1", { id: "1", balance: 5 }]]);
  beforeAll(async () => {
    const svc = expressAdapter(createPipeline({ validators: validators({ required: true }) }));
    const a = express();
    a.use(express.json());
    a.use(svc.prepare);
    const find = (req: express.Request) => accounts.get(String(req.params.id));
    a.delete(
      "/accounts/:id",
      svc.handle(async (req: express.Request) => {
        const current = find(req);
        await svc.preconditions(req, current === undefined ? undefined : { data: current });
        if (current === undefined) throw HttpError.notFound(`account ${req.params.id} does not exist`);
        accounts.delete(current.id);
        return reply.empty();
      }),
    );
    a.put(
      "/accounts/:id",
      svc.handle(async (req: express.Request) => {
        const current = find(req);
        // A PUT creates the account when it is absent (a 201): If-Match: * fails there.
        await svc.preconditions(req, current === undefined ? undefined : { data: current }, true);
        const next = { id: String(req.params.id), balance: Number(req.body?.balance ?? 0) };
        accounts.set(next.id, next);
        return reply(next, { status: current === undefined ? 201 : 200 });
      }),
    );
    a.use(errorHandler(quiet));
    server = await listen(a);
  });
  afterAll(() => server.close());

  it.each([
    { "if-match": "*" },
    { "if-match": '"stale"' },
    { "if-unmodified-since": "Thu, 01 Jan 2015 00:00:00 GMT" },
    { "if-none-match": "*" },
  ])("DELETE /accounts/0 with %j → 404, not 412", async (headers) => {
    const res = await raw(`${server.url}/accounts/0`, "DELETE", headers);
    expect(res.status).toBe(404);
    expect(JSON.parse(res.body.toString())).toMatchObject({ status: 404 });
  });

  it("DELETE /accounts/1 with If-Match: * → 204; with a stale tag → 412; without any → 428", async () => {
    accounts.set("1", { id: "1", balance: 5 });
    expect((await raw(`${server.url}/accounts/1`, "DELETE", {})).status).toBe(428);
    expect((await raw(`${server.url}/accounts/1`, "DELETE", { "if-match": '"stale"' })).status).toBe(412);
    expect((await raw(`${server.url}/accounts/1`, "DELETE", { "if-match": "*" })).status).toBe(204);
    expect(accounts.has("1")).toBe(false);
  });

  it("PUT /accounts/9, which creates it: If-Match: * → 412; If-None-Match: * → 201", async () => {
    const put = (precondition: Record<string, string>) =>
      fetch(`${server.url}/accounts/9`, {
        method: "PUT",
        headers: { "content-type": "application/json", ...precondition },
        body: JSON.stringify({ balance: 3 }),
      });
    expect((await put({ "if-match": "*" })).status).toBe(412);
    expect(accounts.has("9")).toBe(false);
    expect((await put({ "if-none-match": "*" })).status).toBe(201);
    expect(accounts.get("9")?.balance).toBe(3);
  });
});

// RFC 9111 §7.3: "the Set-Cookie response header field does not inhibit caching"; a shared cache
// may store a no-cache response and, once revalidated, hand one client's cookie to the next.
describe("default Cache-Control on a response that sets a cookie (RFC 9111 §5.2.2.7, §7.3)", () => {
  async function serve(options: ValidatorsOptions) {
    const svc = expressAdapter(createPipeline({ validators: validators(options) }));
    const a = express();
    a.get(
      "/me",
      svc.handle(() => reply(employee, { headers: { "Set-Cookie": "sid=secret-session; Path=/" } })),
    );
    // A cookie set in front of the pipeline, by the app's own middleware.
    a.get(
      "/me-in-front",
      (_req, res, next) => {
        res.cookie("sid", "secret-session");
        next();
      },
      svc.handle(() => employee),
    );
    a.get(
      "/plain",
      svc.handle(() => employee),
    );
    a.get(
      "/own",
      svc.handle(() =>
        reply(employee, {
          headers: { "Set-Cookie": "sid=secret-session", "Cache-Control": "public, max-age=5" },
        }),
      ),
    );
    return listen(a);
  }

  it("Set-Cookie with the default → private, no-cache; its 304 too; without a cookie → no-cache", async () => {
    const server = await serve({});
    try {
      for (const path of ["/me", "/me-in-front"]) {
        const first = await fetch(`${server.url}${path}`);
        expect(first.headers.get("set-cookie")).toContain("sid=");
        expect(first.headers.get("cache-control")).toBe("private, no-cache");
        const again = await fetch(`${server.url}${path}`, {
          headers: { "if-none-match": first.headers.get("etag") as string },
        });
        expect(again.status).toBe(304);
        expect(again.headers.get("cache-control")).toBe("private, no-cache");
      }
      expect((await fetch(`${server.url}/plain`)).headers.get("cache-control")).toBe("no-cache");
      // A reply's own Cache-Control is its decision.
      expect((await fetch(`${server.url}/own`)).headers.get("cache-control")).toBe("public, max-age=5");
    } finally {
      await server.close();
    }
  });

  it("Set-Cookie with defaultCacheControl: public, max-age=60 → private, max-age=60", async () => {
    const server = await serve({ defaultCacheControl: "public, max-age=60" });
    try {
      expect((await fetch(`${server.url}/me`)).headers.get("cache-control")).toBe("private, max-age=60");
      expect((await fetch(`${server.url}/plain`)).headers.get("cache-control")).toBe("public, max-age=60");
    } finally {
      await server.close();
    }
  });

  it("Set-Cookie with defaultCacheControl: no-store or private → kept as it is", async () => {
    for (const value of ["no-store", "private, max-age=60"]) {
      const server = await serve({ defaultCacheControl: value });
      try {
        expect((await fetch(`${server.url}/me`)).headers.get("cache-control")).toBe(value);
      } finally {
        await server.close();
      }
    }
  });

  it("defaultCacheControl: false → none", async () => {
    const server = await serve({ defaultCacheControl: false });
    try {
      expect((await fetch(`${server.url}/plain`)).headers.get("cache-control")).toBeNull();
    } finally {
      await server.close();
    }
  });
});

// RFC 9111 §4.2.1: a response's freshness lifetime is its max-age, "If the Expires response header
// field is present, use its value minus the value of the Date response header field"; §5.2.2.4:
// no-cache forbids reusing it without validation. A reply that set Expires chose a policy.
describe("default Cache-Control on a response that sets Expires (RFC 9111 §4.2.1, §5.3)", () => {
  const EXPIRES = "Thu, 01 Jan 2037 00:00:00 GMT";
  let server: Listening;
  beforeAll(async () => {
    const svc = expressAdapter(
      createPipeline({ representations: representations({ offers: [json] }), validators: validators() }),
    );
    const a = express();
    a.get(
      "/expires",
      svc.handle(() => reply(employee, { headers: { Expires: EXPIRES } })),
    );
    a.get(
      "/expires-cookie",
      svc.handle(() =>
        reply(employee, { headers: { Expires: EXPIRES, "Set-Cookie": "sid=secret-session" } }),
      ),
    );
    a.get(
      "/expires-streamed",
      svc.handle(() => reply.bytes(chunks("a", "b"), "text/plain", { headers: { Expires: EXPIRES } })),
    );
    server = await listen(a);
  });
  afterAll(() => server.close());

  it("Expires: a future date → no Cache-Control added (no-cache would void it), nor on the 304", async () => {
    const first = await raw(`${server.url}/expires`, "GET", {});
    expect(first.status).toBe(200);
    expect(first.headers.expires).toBe(EXPIRES);
    expect(first.headers["cache-control"]).toBeUndefined();
    const again = await raw(`${server.url}/expires`, "GET", {
      "if-none-match": first.headers.etag as string,
    });
    expect(again.status).toBe(304);
    expect(again.headers.expires).toBe(EXPIRES);
    expect(again.headers["cache-control"]).toBeUndefined();
    const streamed = await raw(`${server.url}/expires-streamed`, "GET", {});
    expect(streamed.headers["cache-control"]).toBeUndefined();
    expect(streamed.body.toString()).toBe("ab");
  });

  it("Expires with Set-Cookie → Cache-Control: private only, keeping the expiry for the client's cache", async () => {
    const res = await raw(`${server.url}/expires-cookie`, "GET", {});
    expect(res.headers.expires).toBe(EXPIRES);
    expect(res.headers["cache-control"]).toBe("private");
  });
});

// A route's cache policy is a field of the reply its handler returns (formatCacheControl, resolved
// once); an error is thrown to the error handler (no-store) or returned as its own reply, so the
// policy of the route's 200 never reaches an error response.
describe("a route's cache policy on its 200, not on its errors", () => {
  let server: Listening;
  const policy = { "Cache-Control": formatCacheControl({ visibility: "public", maxAge: 86400 }) };
  beforeAll(async () => {
    const svc = expressAdapter(createPipeline({ validators: validators() }));
    const a = express();
    a.get(
      "/down",
      svc.handle(() => reply.bytes("try again later", "text/plain", { status: 503 })),
    );
    a.get(
      "/gone",
      svc.handle(() => reply.empty({ status: 404 })),
    );
    a.get(
      "/thrown",
      svc.handle(() => {
        throw HttpError.notFound();
      }),
    );
    a.get(
      "/own",
      svc.handle(() =>
        reply({ missing: true }, { status: 404, headers: { "Cache-Control": "public, max-age=60" } }),
      ),
    );
    a.get(
      "/moved",
      svc.handle(() => reply.empty({ status: 301, headers: { ...policy, Location: "/elsewhere" } })),
    );
    a.get(
      "/ok",
      svc.handle(() => reply(employee, { headers: policy })),
    );
    a.use(errorHandler(quiet));
    server = await listen(a);
  });
  afterAll(() => server.close());

  it.each(["/down", "/gone"])("GET %s (an error reply) → no Cache-Control, not the default", async (path) => {
    const res = await raw(`${server.url}${path}`, "GET", {});
    expect(res.status).toBeGreaterThanOrEqual(400);
    expect(res.headers["cache-control"]).toBeUndefined();
  });

  it("GET /thrown → the error handler's no-store", async () => {
    const res = await raw(`${server.url}/thrown`, "GET", {});
    expect([res.status, res.headers["cache-control"]]).toEqual([404, "no-store"]);
  });

  it("the reply's own Cache-Control on its error, a redirect, and a 200 keep theirs", async () => {
    expect((await raw(`${server.url}/own`, "GET", {})).headers["cache-control"]).toBe("public, max-age=60");
    expect((await raw(`${server.url}/moved`, "GET", {})).headers["cache-control"]).toBe(
      "public, max-age=86400",
    );
    expect((await raw(`${server.url}/ok`, "GET", {})).headers["cache-control"]).toBe("public, max-age=86400");
  });
});
