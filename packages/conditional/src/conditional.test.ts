import { gunzipSync } from "node:zlib";
import { errorHandler, notFound } from "@svc/errors";
import { negotiate } from "@svc/negotiate";
import { type Listening, listen, rawRequest as raw } from "@svc/test-utils";
import express from "express";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cacheControl, setLastModified } from "./cache-control.js";
import { conditional } from "./conditional.js";
import { representationTag } from "./validators.js";

/** The tag `conditional()` gives a JSON body (RFC 9110 §8.8.3: labelled by its media type). */
const jsonTag = (body: string | Uint8Array) => representationTag("application/json", undefined, body);

import { preconditions } from "./preconditions-middleware.js";

const employee = { id: 42, name: "Ada", department: "R&D", salary: 1000 };
const big = Array.from({ length: 60 }, (_, i) => ({ ...employee, id: i }));
const modified = new Date("2026-01-02T03:04:05Z");

function app(withNegotiate: boolean) {
  const a = express();
  if (withNegotiate) a.use(negotiate({ compression: { threshold: 500 } }));
  a.use(conditional());
  a.get("/employees/42", (_req, res) => {
    setLastModified(res, modified);
    res.setHeader("Content-Location", "/employees/42");
    if (withNegotiate) return res.represent(employee);
    res.json(employee);
  });
  a.get("/employees", (_req, res) => (withNegotiate ? res.represent(big) : res.json(big)));
  a.get("/countries", cacheControl({ visibility: "public", maxAge: 86400 }), (_req, res) => {
    res.setHeader("Expires", "Thu, 01 Jan 2037 00:00:00 GMT");
    res.json(["DE", "FR"]);
  });
  a.get("/balance", cacheControl({ noStore: true }), (_req, res) => res.json({ balance: 5 }));
  a.get("/own-tag-represented", (_req, res) => {
    res.setHeader("ETag", '"v7"');
    if (withNegotiate) return res.represent(employee);
    res.end(JSON.stringify(employee));
  });
  a.get("/no-body", (_req, res) => {
    setLastModified(res, modified);
    res.send();
  });
  // A HEAD answered without a body, as node:http handlers write it: the validators and the length
  // of the GET's representation, then res.end().
  a.get("/head-by-hand", (req, res) => {
    const body = JSON.stringify(employee);
    res.setHeader("ETag", jsonTag(body));
    setLastModified(res, modified);
    res.setHeader("Content-Type", "application/json");
    if (req.method === "HEAD") {
      res.setHeader("Content-Length", Buffer.byteLength(body));
      return void res.end();
    }
    res.end(body);
  });
  // A streamed export with its own tag: the GET is written in chunks (no length, so coded for a
  // gzip client), the HEAD sends the same header fields and no content.
  a.get("/export", (req, res) => {
    res.setHeader("ETag", '"export-1"');
    res.setHeader("Content-Type", "text/csv; charset=utf-8");
    if (req.method === "HEAD") return void res.end();
    res.write("id,name\n");
    res.end("42,Ada\n");
  });
  a.get("/comma-tag", (_req, res) => {
    res.setHeader("ETag", '"a,b"');
    res.json(employee);
  });
  a.get("/own-tag", (_req, res) => {
    res.setHeader("ETag", '"v7"');
    res.json(employee);
  });
  a.use(notFound());
  a.use(errorHandler({ logger: { error: () => {} } }));
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
  it("res.json → strong tag of the bytes sent, replacing Express's weak default", async () => {
    const res = await raw(`${plain.url}/employees/42`, "GET", {});
    expect(res.headers.etag).toBe(jsonTag(JSON.stringify(employee)));
    expect(res.headers.etag).not.toMatch(/^W\//);
  });

  it("JSON and XML of one resource get different strong tags", async () => {
    const json = await raw(`${full.url}/employees/42`, "GET", { accept: "application/json" });
    const xml = await raw(`${full.url}/employees/42`, "GET", { accept: "application/xml" });
    expect(json.headers.etag).toBe(jsonTag(json.body));
    expect(xml.headers.etag).toBe(representationTag("application/xml", undefined, xml.body));
    expect(json.headers.etag).not.toBe(xml.headers.etag);
  });

  it("a handler's own ETag with res.represent → kept, and If-None-Match on it → 304", async () => {
    for (const server of [plain, full]) {
      const res = await raw(`${server.url}/own-tag-represented`, "GET", {});
      expect(res.headers.etag).toBe('"v7"');
      const again = await raw(`${server.url}/own-tag-represented`, "GET", { "if-none-match": '"v7"' });
      expect(again.status).toBe(304);
    }
  });

  it("a handler's own ETag is kept", async () => {
    const res = await raw(`${plain.url}/own-tag`, "GET", {});
    expect(res.headers.etag).toBe('"v7"');
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
    ["res.json", () => plain],
    ["res.represent with compression", () => full],
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
      // If-Modified-Since header field if [...] the field value has more than one member". An
      // array value goes out as two field lines (Node keeps only the first line of this field).
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

      it("HEAD answered with res.end() and no body: If-None-Match / If-Modified-Since → 304, as GET", async () => {
        // RFC 9110 §13.1.2: "the origin server MUST NOT perform the requested method if the
        // condition evaluates to false; instead, the origin server MUST respond with either a) the
        // 304 (Not Modified) status code if the request method is GET or HEAD".
        const url = `${server().url}/head-by-hand`;
        const etag = jsonTag(JSON.stringify(employee));
        expect((await raw(url, "GET", { "if-none-match": etag })).status).toBe(304);
        const head = await raw(url, "HEAD", { "if-none-match": etag });
        expect(head.status).toBe(304);
        expect(head.headers.etag).toBe(etag);
        expect(head.headers["content-length"]).toBeUndefined();
        expect((await raw(url, "HEAD", { "if-none-match": '"other"' })).status).toBe(200);
        const since = await raw(url, "HEAD", { "if-modified-since": modified.toUTCString() });
        expect(since.status).toBe(304);
      });

      it("HEAD with If-None-Match: current tag → 304", async () => {
        const etag = await tag();
        expect((await raw(`${server().url}/employees/42`, "HEAD", { "if-none-match": etag })).status).toBe(
          304,
        );
      });
    });
  }

  it("negotiate + compression: 304 for a gzip client keeps the coded response's weak tag and Vary", async () => {
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
    "%s of a streamed export (res.write, or res.end() for HEAD) → the default Cache-Control, as its 304",
    async (method) => {
      for (const server of [plain, full]) {
        const ok = await raw(`${server.url}/export`, method, {});
        expect(ok.status).toBe(200);
        expect(ok.headers["cache-control"]).toBe("no-cache");
        const notModified = await raw(`${server.url}/export`, method, { "if-none-match": '"export-1"' });
        expect(notModified.headers["cache-control"]).toBe("no-cache");
      }
    },
  );

  it("the XML tag does not revalidate the JSON representation", async () => {
    const xml = await raw(`${full.url}/employees/42`, "GET", { accept: "application/xml" });
    const res = await raw(`${full.url}/employees/42`, "GET", { "if-none-match": xml.headers.etag as string });
    expect(res.status).toBe(200);
  });
});

describe("If-Match / If-Unmodified-Since on GET and HEAD → 412 (RFC 9110 §13.1.1, §13.1.4, §13.2.2)", () => {
  for (const [name, server] of [
    ["res.json", () => plain],
    ["res.represent with compression", () => full],
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

      it("If-Match: other tag on a handler's own tag written with res.end → 412", async () => {
        expect((await get({ "if-match": '"v1"' }, "GET", "/own-tag-represented")).status).toBe(412);
        expect((await get({ "if-match": '"v7"' }, "GET", "/own-tag-represented")).status).toBe(200);
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
  it("cacheControl({ visibility: public, maxAge }) → header kept on the 304 with Expires", async () => {
    const first = await raw(`${plain.url}/countries`, "GET", {});
    expect(first.headers["cache-control"]).toBe("public, max-age=86400");
    const res = await raw(`${plain.url}/countries`, "GET", { "if-none-match": first.headers.etag as string });
    expect(res.status).toBe(304);
    expect(res.headers["cache-control"]).toBe("public, max-age=86400");
    expect(res.headers.expires).toBe("Thu, 01 Jan 2037 00:00:00 GMT");
  });

  it("cacheControl({ noStore }) → no-store", async () => {
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

describe("negotiate + conditional + preconditions: a lost-update round trip", () => {
  let server: Listening;
  let doc = { id: 1, name: "Ada" };
  beforeAll(async () => {
    const a = express();
    a.use(negotiate());
    a.use(conditional());
    a.use(express.json());
    const current = () => ({ etag: jsonTag(JSON.stringify(doc)) });
    a.get("/doc", (_req, res) => res.represent(doc));
    a.put("/doc", preconditions({ current, required: true }), (req, res) => {
      doc = req.body as typeof doc;
      res.represent(doc);
    });
    a.use(errorHandler({ logger: { error: () => {} } }));
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

// RFC 9111 §7.3: "the Set-Cookie response header field does not inhibit caching"; a shared cache
// may store a no-cache response and, once revalidated, hand one client's cookie to the next.
describe("default Cache-Control on a response that sets a cookie (RFC 9111 §5.2.2.7, §7.3)", () => {
  async function serve(options: Parameters<typeof conditional>[0]) {
    const a = express();
    a.use(conditional(options));
    a.get("/me", (_req, res) => {
      res.cookie("sid", "secret-session");
      res.json(employee);
    });
    a.get("/plain", (_req, res) => res.json(employee));
    a.get("/own", (_req, res) => {
      res.cookie("sid", "secret-session");
      res.setHeader("Cache-Control", "public, max-age=5");
      res.json(employee);
    });
    return listen(a);
  }

  it("Set-Cookie with the default → private, no-cache; its 304 too; without a cookie → no-cache", async () => {
    const server = await serve({});
    try {
      const first = await fetch(`${server.url}/me`);
      expect(first.headers.get("set-cookie")).toContain("sid=");
      expect(first.headers.get("cache-control")).toBe("private, no-cache");
      const again = await fetch(`${server.url}/me`, {
        headers: { "if-none-match": first.headers.get("etag") as string },
      });
      expect(again.status).toBe(304);
      expect(again.headers.get("cache-control")).toBe("private, no-cache");
      expect((await fetch(`${server.url}/plain`)).headers.get("cache-control")).toBe("no-cache");
      // A handler's own Cache-Control is its decision.
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
});

// RFC 9111 §4.2.1: a response's freshness lifetime is its max-age, "If the Expires response header
// field is present, use its value minus the value of the Date response header field"; §5.2.2.4:
// no-cache forbids reusing it without validation. A handler that set Expires chose a policy.
describe("default Cache-Control on a response that sets Expires (RFC 9111 §4.2.1, §5.3)", () => {
  const EXPIRES = "Thu, 01 Jan 2037 00:00:00 GMT";
  let server: Listening;
  beforeAll(async () => {
    const a = express();
    a.use(negotiate());
    a.use(conditional());
    a.get("/expires", (_req, res) => {
      res.setHeader("Expires", EXPIRES);
      res.json(employee);
    });
    a.get("/expires-cookie", (_req, res) => {
      res.setHeader("Expires", EXPIRES);
      res.cookie("sid", "secret-session");
      res.json(employee);
    });
    a.get("/expires-streamed", (_req, res) => {
      res.setHeader("Expires", EXPIRES);
      res.type("text/plain");
      res.write("a");
      res.end("b");
    });
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
  });

  it("Expires with Set-Cookie → Cache-Control: private only, keeping the expiry for the client's cache", async () => {
    const res = await raw(`${server.url}/expires-cookie`, "GET", {});
    expect(res.headers.expires).toBe(EXPIRES);
    expect(res.headers["cache-control"]).toBe("private");
  });
});

// cacheControl()'s JSDoc and README: "Error responses are left to the error handler, which sends
// no-store". A handler answering an error itself (res.status(503).send(...), res.sendStatus(404))
// kept the route's policy, so a shared cache could serve the outage for the route's max-age (RFC
// 9111 §3: any final status may be stored with explicit freshness, §5.2.2.9 public).
describe("cacheControl() on a route whose handler answers an error itself", () => {
  let server: Listening;
  beforeAll(async () => {
    const a = express();
    a.use(conditional());
    const policy = cacheControl({ visibility: "public", maxAge: 86400 });
    a.get("/down", policy, (_req, res) => void res.status(503).send("try again later"));
    a.get("/gone", policy, (_req, res) => void res.sendStatus(404));
    a.get(
      "/by-hand",
      policy,
      (_req, res) => void res.writeHead(500, { "Content-Type": "text/plain" }).end("x"),
    );
    a.get("/own", policy, (_req, res) => {
      res.setHeader("Cache-Control", "public, max-age=60");
      res.status(404).json({ missing: true });
    });
    a.get("/moved", policy, (_req, res) => res.redirect(301, "/elsewhere"));
    a.get("/ok", policy, (_req, res) => res.json(employee));
    server = await listen(a);
  });
  afterAll(() => server.close());

  it.each(["/down", "/gone", "/by-hand"])(
    "GET %s (an error written by the handler) → not the route's public, max-age",
    async (path) => {
      const res = await raw(`${server.url}${path}`, "GET", {});
      expect(res.status).toBeGreaterThanOrEqual(400);
      expect(res.headers["cache-control"]).toBeUndefined();
    },
  );

  it("the handler's own Cache-Control on its error, a redirect, and a 200 keep theirs", async () => {
    expect((await raw(`${server.url}/own`, "GET", {})).headers["cache-control"]).toBe("public, max-age=60");
    expect((await raw(`${server.url}/moved`, "GET", {})).headers["cache-control"]).toBe(
      "public, max-age=86400",
    );
    expect((await raw(`${server.url}/ok`, "GET", {})).headers["cache-control"]).toBe("public, max-age=86400");
  });
});
