import { createHash } from "node:crypto";
import { createReadStream, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { get as httpGet } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { brotliDecompressSync, gunzipSync, gzipSync } from "node:zlib";
import { fieldText, HttpError, matchMediaType, reply, type Validators, type Versioner } from "@svc/kernel";
import { type Listening, rawRequest } from "@svc/test-utils";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseBody } from "../src/express.js";
import {
  compression,
  csv,
  defaultRepresentations,
  type Representation,
  representations,
  selectEncoding,
  selectLanguage,
} from "../src/index.js";
import { type Client, inMemory, onExpress, type Route } from "./core.js";

const employee = { id: 42, name: "Ada <Lovelace> & co", department: "R&D", salary: 1000 };
const employees = [employee, { id: 43, name: 'Grace, "Amazing"', department: "Navy", salary: 2000 }];
const pdf: Representation = {
  mediaType: "application/pdf",
  serialize: () => new Uint8Array([0x25, 0x50, 0x44, 0x46, 0x2d, 0x00, 0xff]),
};

/** A PDF with fields of its own: shown inline with a file name (RFC 6266 §4.2). */
const invoicePdf: Representation = {
  ...pdf,
  fields: (data) => ({
    "Content-Disposition": `inline; filename="invoice-${(data as { id: number }).id}.pdf"`,
  }),
};

/** As @svc/versioning's media-type strategy does: the request's version labels its JSON or XML. */
const labels: Versioner = {
  resolve(_request, target) {
    const label = target.startsWith("/labelled-json")
      ? "application/vnd.svc.v2+json"
      : target.startsWith("/labelled-xml")
        ? "application/vnd.svc.v2+xml"
        : undefined;
    return { target, version: undefined, prefix: "", label, fields: {}, vary: [], error: undefined };
  },
};
const steps = {
  versioning: labels,
  representations: representations({ languages: ["en", "de"] }),
  coding: compression({ threshold: 200 }),
};
// Data holding functions and symbols: JSON leaves them out; the other representations must not
// print a function's source either.
const withCode = {
  id: 1,
  run() {
    return "SOURCE-MARKER";
  },
  tags: ["a", () => "SOURCE-MARKER"],
  kind: Symbol("SYMBOL-MARKER"),
};
const fifty = () => Array.from({ length: 50 }, () => employee);
const routes: Record<string, Route> = {
  "/employees/42": () => employee,
  "/employees": () => employees,
  "/labelled-json": () => employee,
  "/labelled-xml": () => employee,
  "/nullable": () => ({ id: 1, managerId: null, note: "", tags: [null, ""], gone: undefined }),
  "/nothing": () => reply(null),
  "/nulls": () => [null, ""],
  "/longs": () => [{ id: 9223372036854775807n, name: "x" }],
  "/big": () => Array.from({ length: 50 }, (_, i) => ({ ...employee, id: i })),
  "/with-code": () => reply(withCode, { add: [csv] }),
  "/code-list": () => reply([withCode, () => "SOURCE-MARKER"], { add: [csv] }),
  "/forged": () => ({
    name: "Ada\nrole: admin",
    "x\r\nrole": "admin",
    tags: ["a\n- b", "C:\\tmp"],
    bell: "\u0007\u2028",
  }),
  "/report": () => reply(employee, { only: ["application/json"], add: [pdf] }),
  "/invoice": () => reply(employee, { only: ["application/json"], add: [invoicePdf] }),
  "/no-transform": () => reply(fifty(), { headers: { "Cache-Control": "no-transform" } }),
  // Two Cache-Control field lines: one list of directives (RFC 9110 §5.3).
  "/no-transform-lines": () =>
    reply(fifty(), { headers: { "Cache-Control": ["public, max-age=60", "No-Transform"] } }),
  // A handler serving bytes it coded itself, with its own ETag.
  "/precoded/tag-first": () =>
    reply.bytes(gzipSync(Buffer.from('{"id":1}')), "application/json", {
      headers: { ETag: '"precoded"', "Content-Encoding": "gzip" },
    }),
  "/precoded/tag-last": () =>
    reply.bytes(gzipSync(Buffer.from('{"id":1}')), "application/json", {
      headers: { "Content-Encoding": "gzip", ETag: '"precoded"' },
    }),
  // Content in its final form, not negotiated (what res.writeHead(200, ...).end("{}") sent).
  "/write-head": () => reply.bytes("{}", "application/json"),
  "/failing": () =>
    reply(employee, {
      representations: [
        {
          mediaType: "application/json",
          serialize: () => {
            throw HttpError.unprocessable("nope");
          },
        },
      ],
    }),
};

let server: Listening & { client: Client };
beforeAll(async () => {
  server = await onExpress(steps, routes, (app) => {
    app.post("/employees", parseBody({ limit: 1000, depth: 5, others: "refuse" }), (req, res) => {
      res.status(201).json({ received: req.body ?? null });
    });
    app.patch("/employees/42", parseBody({ types: ["json"], others: "refuse" }), (req, res) => {
      res.json({ received: req.body ?? null });
    });
  });
});
afterAll(() => server.close());

/**
 * Each table runs twice: over the pipeline's cores in memory, and through a listening Express
 * app (Express 4 in the express 4 project), so a row that differs between them shows at once.
 */
const clients: [string, () => Client][] = [
  ["in memory", () => inMemory(steps, routes)],
  ["Express", () => server.client],
];

/** The status, fields and bytes as sent, coded bytes not decoded (fetch would decode them). */
async function rawGet(
  via: string,
  path: string,
  headers: Record<string, string>,
): Promise<{ headers: Record<string, unknown>; body: Buffer }> {
  if (via !== "Express") {
    const res = await inMemory(steps, routes)(path, { headers });
    return { headers: Object.fromEntries(res.headers), body: Buffer.from(await res.arrayBuffer()) };
  }
  return new Promise((resolve, reject) => {
    httpGet(`${server.url}${path}`, { headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => resolve({ headers: res.headers, body: Buffer.concat(chunks) }));
    }).on("error", reject);
  });
}

describe.each(clients)("%s", (via, client) => {
  const get = (path: string, headers: Record<string, string> = {}) =>
    client()(path, { headers: { "accept-encoding": "identity", ...headers } });

  describe("representations(): functions and symbols in the data", () => {
    it.each(["application/json", "application/xml", "text/plain", "text/html", "text/csv"])(
      "%s never carries a function's source or a symbol",
      async (accept) => {
        // CSV represents collections only.
        for (const path of accept === "text/csv" ? ["/code-list"] : ["/with-code", "/code-list"]) {
          const res = await get(path, { accept });
          expect(res.status).toBe(200);
          const body = await res.text();
          expect(body).not.toContain("SOURCE-MARKER");
          expect(body).not.toContain("SYMBOL-MARKER");
        }
      },
    );
  });

  describe("representations(): media types", () => {
    it("no Accept → JSON with charset", async () => {
      const res = await get("/employees/42");
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toBe("application/json; charset=utf-8");
      expect(await res.json()).toEqual(employee);
      expect(res.headers.get("vary")).toMatch(/Accept(?!-)/);
    });

    it("Accept: application/xml → escaped, well-formed XML", async () => {
      const res = await get("/employees/42", { accept: "application/xml" });
      expect(res.headers.get("content-type")).toBe("application/xml; charset=utf-8");
      const body = await res.text();
      expect(body).toContain("<name>Ada &lt;Lovelace&gt; &amp; co</name>");
      expect(body).toMatch(/^<\?xml version="1.0" encoding="UTF-8"\?>\n<resource>/);
    });

    // XML Schema Part 1 §2.6.2: xsi:nil="true" marks an element whose value is absent; an empty
    // element is the empty string. Both were <x/> or <x></x>, the same infoset, so a client could not
    // tell a JSON null from "".
    const XSI = 'xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"';
    it.each([
      [
        "/nullable",
        `<resource ${XSI}><id>1</id><managerId xsi:nil="true"/><note></note><tags><item xsi:nil="true"/><item></item></tags></resource>`,
      ],
      ["/nothing", `<resource ${XSI} xsi:nil="true"/>`],
      ["/nulls", `<items ${XSI}><item xsi:nil="true"/><item></item></items>`],
    ])('Accept: application/xml, GET %s → null as xsi:nil, "" as an empty element', async (path, xml) => {
      const res = await get(path, { accept: "application/xml" });
      expect(res.status).toBe(200);
      expect(await res.text()).toBe(`<?xml version="1.0" encoding="UTF-8"?>\n${xml}`);
    });
    it("Accept: application/xml, no null in the data → no xsi namespace declared", async () => {
      const body = await (await get("/employees/42", { accept: "application/xml" })).text();
      expect(body).not.toContain("xmlns:xsi");
    });

    // RFC 9110 §8.3: a Content-Type describes the representation sent; the plain JSON and XML are
    // not of the client's structured-suffix type (RFC 6838 §4.2.8 only makes it parseable as such).
    it.each([
      ["application/vnd.svc.v2+json", 406, "application/json; charset=utf-8"],
      ["application/vnd.svc.v2+xml", 406, "application/json; charset=utf-8"],
      // The 406 itself is an error record, sent as application/problem+json when asked (RFC 9457 §3).
      ["application/problem+json", 406, "application/problem+json; charset=utf-8"],
      ["application/foo+xml", 406, "application/json; charset=utf-8"],
      ["application/problem+json, application/xml;q=0.5", 200, "application/xml; charset=utf-8"],
      ["application/foo+xml, application/json;q=0.1", 200, "application/json; charset=utf-8"],
    ])("Accept: %s → %s with %s, never the client's undeclared suffix type", async (accept, status, type) => {
      const res = await get("/employees/42", { accept });
      expect(res.status).toBe(status);
      // A 406's type is the error handler's choice: the listening app's errorHandler of @svc/errors.
      if (status === 200 || via === "Express") expect(res.headers.get("content-type")).toBe(type);
    });

    it.each([
      ["application/vnd.svc.v2+json", "/labelled-json", "application/vnd.svc.v2+json; charset=utf-8"],
      ["application/vnd.svc.v2+xml", "/labelled-xml", "application/vnd.svc.v2+xml; charset=utf-8"],
      [
        "application/vnd.svc.v9+json, application/vnd.svc.v2+json;q=0.5",
        "/labelled-json",
        "application/vnd.svc.v2+json; charset=utf-8",
      ],
    ])("Accept: %s on a response labelled with that vendor type → sent as it", async (accept, path, type) => {
      const res = await get(path, { accept });
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toBe(type);
      const body = await res.text();
      if (type.includes("+xml")) expect(body).toContain("<resource>");
      else expect(JSON.parse(body)).toEqual(employee);
    });

    it("Accept: text/csv on a collection → RFC 4180 CSV with quoting", async () => {
      const res = await get("/employees", { accept: "text/csv" });
      expect(res.headers.get("content-type")).toBe("text/csv; charset=utf-8");
      const body = await res.text();
      expect(body.split("\r\n")[0]).toBe("id,name,department,salary");
      expect(body).toContain('43,"Grace, ""Amazing""",Navy,2000');
    });

    it("Accept: text/csv on a single resource → 406 listing what is available", async () => {
      const res = await get("/employees/42", { accept: "text/csv" });
      expect(res.status).toBe(406);
      const body = (await res.json()) as { message: string };
      expect(body.message).toContain("application/json, application/xml, text/plain, text/html");
      expect(body.message).not.toContain("text/csv");
    });

    it("Accept: text/html → accessible page with a table for collections", async () => {
      const res = await get("/employees", { accept: "text/html", "accept-language": "de" });
      expect(res.headers.get("content-type")).toBe("text/html; charset=utf-8");
      const body = await res.text();
      expect(body).toContain('<html lang="de">');
      expect(body).toContain('<th scope="col">name</th>');
      expect(body).toContain("Ada &#60;Lovelace&#62; &#38; co");
    });

    it("Accept: text/plain → key: value lines", async () => {
      const res = await get("/employees/42", { accept: "text/plain" });
      expect(res.headers.get("content-type")).toBe("text/plain; charset=utf-8");
      expect(await res.text()).toContain("department: R&D");
    });

    // A line is one member: a line break in a key or value must not start a forged `key: value`
    // line. Backslash and control characters are written as JSON string escapes (RFC 8259 §7).
    it("Accept: text/plain, line breaks in keys and values → escaped, one line per member", async () => {
      const res = await get("/forged", { accept: "text/plain" });
      expect(await res.text()).toBe(
        [
          "name: Ada\\nrole: admin",
          "x\\r\\nrole: admin",
          "tags:",
          "  - a\\n- b",
          "  - C:\\\\tmp",
          "bell: \\u0007\\u2028",
          "",
        ].join("\n"),
      );
    });

    it.each(["image/png", "*/*;q=0", "application/json;q=0, */*;q=0", "application/*+json"])(
      "Accept: %s → 406",
      async (accept) => {
        const res = await get("/employees/42", { accept });
        expect(res.status).toBe(406);
        expect(((await res.json()) as { message: string }).message).toContain("application/json");
      },
    );

    it.each(["garbage", "application/json;q=2", ";;;", "", "*/*;q=abc"])(
      "Accept: %j (malformed) → 200 JSON, never 500",
      async (accept) => {
        const res = await get("/employees/42", { accept });
        expect(res.status).toBe(200);
        expect(res.headers.get("content-type")).toBe("application/json; charset=utf-8");
      },
    );

    it("per-response representations: JSON and PDF bytes", async () => {
      const res = await get("/report", { accept: "application/pdf" });
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toBe("application/pdf");
      expect(new Uint8Array(await res.arrayBuffer())).toEqual(
        new Uint8Array([0x25, 0x50, 0x44, 0x46, 0x2d, 0x00, 0xff]),
      );
      const xml = await get("/report", { accept: "application/xml" });
      expect(xml.status).toBe(406);
      expect(await xml.text()).toContain("application/json, application/pdf");
    });

    it("a representation's own fields (Content-Disposition) go out when it is chosen, never with the JSON", async () => {
      const asPdf = await get("/invoice", { accept: "application/pdf" });
      expect(asPdf.headers.get("content-type")).toBe("application/pdf");
      expect(asPdf.headers.get("content-disposition")).toBe(`inline; filename="invoice-${employee.id}.pdf"`);
      const asJson = await get("/invoice", { accept: "application/json" });
      expect(asJson.headers.get("content-type")).toMatch(/^application\/json/);
      expect(asJson.headers.get("content-disposition")).toBeNull();
    });

    it("a serializer's HttpError reaches the error handler", async () => {
      const res = await get("/failing");
      expect(res.status).toBe(422);
    });
  });

  describe("representations(): BigInt values", () => {
    it.each([
      ["application/json", '[{"id":9223372036854775807,"name":"x"}]'],
      ["application/xml", "<id>9223372036854775807</id>"],
      ["text/csv", "9223372036854775807,x"],
      ["text/plain", "id: 9223372036854775807"],
      ["text/html", "<td>9223372036854775807</td>"],
    ])("a BigInt id of 2^63 − 1, Accept: %s → 200 with every digit", async (accept, expected) => {
      const res = await get("/longs", { accept });
      expect(res.status).toBe(200);
      expect(await res.text()).toContain(expected);
    });
  });

  describe("Accept-Language", () => {
    it.each([
      ["de-DE, en;q=0.5", "de"],
      ["fr", "en"],
      ["en;q=5", "en"],
      ["", "en"],
      // The same weights in either order: de-AT falls back to de whatever de-CH;q=0 says.
      ["de-CH;q=0, de-AT", "de"],
      ["de-AT, de-CH;q=0", "de"],
      // RFC 4647 §3.3.1: de-CH does not match de. A refusal (q=0, RFC 9110 §12.4.2) of a regional
      // variant refuses that variant only; the fallback from de-CH to de serves a request.
      ["en-GB;q=0, *", "en"],
      ["DE-ch;q=0, *;q=0.5, en;q=0.4", "de"],
      ["en-GB;q=0, de;q=0.1, *;q=0.5", "en"],
      ["en-GB;q=0.000, de;q=0.1, *", "en"],
      // A refusal of the language itself still refuses it, and its variants.
      ["de;q=0, *", "en"],
      ["en;q=0, en-GB, *;q=0.1", "de"],
    ])("Accept-Language: %j → Content-Language %s", async (header, lang) => {
      const res = await get("/employees/42", { "accept-language": header });
      expect(res.status).toBe(200);
      expect(res.headers.get("content-language")).toBe(lang);
      expect(res.headers.get("vary")).toBe("Accept, Accept-Language, Accept-Encoding");
    });

    // A range listed twice: the lowest weight it is given counts, in either order, as for
    // Accept-Encoding (q=0 is "not acceptable", RFC 9110 §12.4.2, and stays so). Distinct ranges
    // that fall back to one offer (de-CH, de-AT → de) are not duplicates.
    it.each([
      ["de;q=0, de", "en"],
      ["de, de;q=0", "en"],
      ["DE;q=0, de, en;q=0.1", "en"],
      ["de;q=0.9, en;q=0.5, de;q=0.1", "en"],
      ["de-CH;q=0.9, de-CH;q=0.1, en;q=0.5", "en"],
      ["*, *;q=0, de;q=0.5", "de"],
      ["de-CH;q=0.1, de-AT;q=0.9, en;q=0.5", "de"],
    ])("Accept-Language naming a range twice, %j → Content-Language %s", async (header, lang) => {
      const res = await get("/employees/42", { "accept-language": header });
      expect(res.status).toBe(200);
      expect(res.headers.get("content-language")).toBe(lang);
      expect(res.headers.get("vary")).toBe("Accept, Accept-Language, Accept-Encoding");
    });
  });

  describe("Accept-Encoding", () => {
    it("gzip above the threshold → gzip, Vary: Accept-Encoding once, the length of the coded bytes", async () => {
      const res = await get("/big", { "accept-encoding": "gzip" });
      expect(res.headers.get("content-encoding")).toBe("gzip");
      expect(res.headers.get("vary")).toBe("Accept, Accept-Language, Accept-Encoding");
      // Coded once, then one write: never the identity length (RFC 9110 §8.6).
      const raw = await rawGet(via, "/big", { "accept-encoding": "gzip" });
      expect(raw.headers["content-length"]).toBe(String(raw.body.length));
      expect(JSON.parse(gunzipSync(raw.body).toString())).toHaveLength(50);
    });

    it("br preferred by the client → br; body decodes to the JSON", async () => {
      const raw = await rawGet(via, "/big", { "accept-encoding": "br;q=1, gzip;q=0.5" });
      expect(raw.headers["content-encoding"]).toBe("br");
      expect(JSON.parse(brotliDecompressSync(raw.body).toString())).toHaveLength(50);
    });

    it("below the threshold → identity", async () => {
      const res = await get("/employees/42", { "accept-encoding": "gzip" });
      expect(res.headers.get("content-encoding")).toBeNull();
      expect(res.headers.get("content-length")).not.toBeNull();
    });

    it("identity;q=0 with gzip → compressed even below the threshold", async () => {
      const raw = await rawGet(via, "/employees/42", { "accept-encoding": "identity;q=0, gzip" });
      expect(raw.headers["content-encoding"]).toBe("gzip");
      expect(JSON.parse(gunzipSync(raw.body).toString())).toEqual(employee);
    });

    it.each(["identity;q=0", "*;q=0", "zstd, identity;q=0"])("Accept-Encoding: %s → 406", async (ae) => {
      const res = await get("/employees/42", { "accept-encoding": ae });
      expect(res.status).toBe(406);
      expect(((await res.json()) as { message: string }).message).toContain("br, gzip, deflate, identity");
      expect(res.headers.get("vary")).toContain("Accept-Encoding");
    });

    it("Cache-Control: no-transform → not compressed", async () => {
      const res = await get("/no-transform", { "accept-encoding": "gzip" });
      expect(res.headers.get("content-encoding")).toBeNull();
    });

    it.each(["GET", "HEAD"])(
      "%s, Cache-Control set as two lines [public, max-age=60 | No-Transform] → not compressed, no Vary: Accept-Encoding",
      async (method) => {
        const res = await client()("/no-transform-lines", {
          method,
          headers: { "accept-encoding": "gzip" },
        });
        expect(res.status).toBe(200);
        expect(res.headers.get("content-encoding")).toBeNull();
        expect(res.headers.get("vary")).toBe("Accept, Accept-Language");
        if (method === "GET") expect((await res.json()) as unknown[]).toHaveLength(50);
      },
    );

    it.each([
      ["identity", "/employees/42", "Accept, Accept-Language, Accept-Encoding"],
      ["identity", "/write-head", "Accept-Encoding"],
      ["identity", "/no-transform", "Accept, Accept-Language"],
      ["gzip;q=0", "/big", "Accept, Accept-Language, Accept-Encoding"],
    ])("Accept-Encoding: %s on %s → uncoded, Vary: %s", async (ae, path, vary) => {
      const res = await get(path, { "accept-encoding": ae });
      expect(res.status).toBe(200);
      expect(res.headers.get("content-encoding")).toBeNull();
      expect(res.headers.get("vary")).toBe(vary);
    });

    it.each(["tag-first", "tag-last"])(
      "a handler's own Content-Encoding (ETag set %s) → the strong tag is made weak",
      async (order) => {
        for (const ae of ["identity", "gzip"]) {
          const res = await get(`/precoded/${order}`, { "accept-encoding": ae });
          expect(res.headers.get("content-encoding")).toBe("gzip");
          expect(res.headers.get("etag")).toBe('W/"precoded"');
        }
      },
    );

    it("a type compression leaves alone (application/pdf) → no Vary: Accept-Encoding", async () => {
      const res = await get("/report", { accept: "application/pdf" });
      expect(res.headers.get("content-type")).toBe("application/pdf");
      expect(res.headers.get("vary")).toBe("Accept, Accept-Language");
    });

    it.each(["gzip;q=2", ",,,", "gzip;q=x"])("Accept-Encoding: %j (malformed) → 200", async (ae) => {
      const res = await get("/big", { "accept-encoding": ae });
      expect(res.status).toBe(200);
    });
  });
});

describe("the decision, from the cores", () => {
  it("Accept: application/xml;q=0.5, text/plain; Accept-Language: de-CH; Accept-Encoding: identity → text/plain, de, identity", () => {
    expect({
      mediaType: matchMediaType(
        "application/xml;q=0.5, text/plain",
        defaultRepresentations.map((r) => r.mediaType),
      ),
      language: selectLanguage("de-CH", ["en", "de"]),
      encoding: selectEncoding("identity", ["br", "gzip", "deflate"]),
    }).toEqual({
      mediaType: { offer: "text/plain", mediaType: "text/plain", q: 1 },
      language: "de",
      encoding: "identity",
    });
  });
});

describe("parseBody", () => {
  const post = (body: string, headers: Record<string, string>, method = "POST", path = "/employees") =>
    fetch(`${server.url}${path}`, { method, body, headers });

  it("JSON body → parsed", async () => {
    const res = await post('{"name":"Ada"}', { "content-type": "application/json; charset=utf-8" });
    expect(res.status).toBe(201);
    expect(await res.json()).toEqual({ received: { name: "Ada" } });
  });

  it("application/merge-patch+json body → parsed", async () => {
    const res = await post(
      '{"salary":5}',
      { "content-type": "application/merge-patch+json" },
      "PATCH",
      "/employees/42",
    );
    expect(await res.json()).toEqual({ received: { salary: 5 } });
  });

  it("XML body → plain object", async () => {
    const res = await post(
      '<employee id="7"><name>Ada &amp; co</name><skill>x</skill><skill>y</skill></employee>',
      {
        "content-type": "application/xml",
      },
    );
    expect(res.status).toBe(201);
    expect(await res.json()).toEqual({
      received: { employee: { "@id": "7", name: "Ada & co", skill: ["x", "y"] } },
    });
  });

  it("XML with elements named constructor, toString, __proto__ → their text, as own keys", async () => {
    const res = await post(
      "<a><constructor>1</constructor><toString>2</toString><__proto__><x>3</x></__proto__><hasOwnProperty>4</hasOwnProperty><hasOwnProperty>5</hasOwnProperty></a>",
      { "content-type": "application/xml" },
    );
    expect(res.status).toBe(201);
    expect(await res.text()).toBe(
      '{"received":{"a":{"constructor":"1","toString":"2","__proto__":{"x":"3"},"hasOwnProperty":["4","5"]}}}',
    );
  });

  it("XML with DOCTYPE → 400", async () => {
    const res = await post('<!DOCTYPE a [<!ENTITY x "boom">]><a>&x;</a>', {
      "content-type": "application/xml",
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { message: string }).message).toBe(
      "XML body: a document type declaration (DOCTYPE) is not accepted",
    );
  });

  it("malformed XML → 400", async () => {
    expect((await post("<a><b></a>", { "content-type": "text/xml" })).status).toBe(400);
  });

  it("malformed JSON → 400", async () => {
    expect((await post('{"name":', { "content-type": "application/json" })).status).toBe(400);
  });

  it("JSON nested deeper than the limit → 400", async () => {
    expect((await post("[[[[[[[1]]]]]]]", { "content-type": "application/json" })).status).toBe(400);
  });

  it("XML nested deeper than the limit → 400", async () => {
    expect(
      (await post("<a><a><a><a><a><a>1</a></a></a></a></a></a>", { "content-type": "application/xml" }))
        .status,
    ).toBe(400);
  });

  it("body over the limit → 413", async () => {
    const res = await post(JSON.stringify({ name: "x".repeat(2000) }), {
      "content-type": "application/json",
    });
    expect(res.status).toBe(413);
  });

  it("Content-Type: text/plain body → 415 with Accept-Post", async () => {
    const res = await post("hello", { "content-type": "text/plain" });
    expect(res.status).toBe(415);
    expect(res.headers.get("accept-post")).toBe("application/json, application/xml");
    expect(((await res.json()) as { message: string }).message).toContain(
      "application/json, application/xml",
    );
  });

  it("body without Content-Type → 415", async () => {
    const res = await fetch(`${server.url}/employees`, { method: "POST", body: new Uint8Array([1, 2, 3]) });
    expect(res.status).toBe(415);
  });

  it("PATCH with XML where only JSON is accepted → 415 with Accept-Patch", async () => {
    const res = await post("<a/>", { "content-type": "application/xml" }, "PATCH", "/employees/42");
    expect(res.status).toBe(415);
    expect(res.headers.get("accept-patch")).toBe("application/json");
  });

  it("Content-Encoding: gzip request body → 415 with Accept-Encoding: identity (RFC 9110 §12.5.3)", async () => {
    const res = await post("{}", { "content-type": "application/json", "content-encoding": "gzip" });
    expect(res.status).toBe(415);
    expect(res.headers.get("accept-encoding")).toBe("identity");
  });

  // RFC 9110 §8.4: Content-Encoding = #content-coding, a list; §5.6.1.2: empty elements do not
  // count. A list naming no coding but identity leaves the content as it is.
  it.each(["", "identity, identity", ", Identity ,"])(
    "Content-Encoding: %j (no coding) → parsed",
    async (contentEncoding) => {
      const res = await post('{"name":"Ada"}', {
        "content-type": "application/json",
        "content-encoding": contentEncoding,
      });
      expect(res.status).toBe(201);
      expect(await res.json()).toEqual({ received: { name: "Ada" } });
    },
  );

  it.each(["identity, gzip", "gzip, identity", "gzip,"])(
    "Content-Encoding: %j → 415",
    async (contentEncoding) => {
      const res = await post("{}", {
        "content-type": "application/json",
        "content-encoding": contentEncoding,
      });
      expect(res.status).toBe(415);
      expect(res.headers.get("accept-encoding")).toBe("identity");
    },
  );

  it("Content-Type: text/plain → 415 without Accept-Encoding (the media type is the problem)", async () => {
    const res = await post("hello", { "content-type": "text/plain" });
    expect(res.status).toBe(415);
    expect(res.headers.get("accept-encoding")).toBeNull();
  });

  it("no body → passes with body undefined", async () => {
    const res = await fetch(`${server.url}/employees`, { method: "POST" });
    expect(await res.json()).toEqual({ received: null });
  });
});

describe("representations() and compression() options", () => {
  it.each([
    [{ offers: [] }],
    [{ offers: [{ mediaType: "*/*", serialize: () => "" }] }],
    [{ languages: ["not a tag"] }],
  ])("representations(%j) → TypeError at construction", (options) => {
    expect(() => representations(options as never)).toThrow(TypeError);
  });
  it("compression({ threshold: -1 }) → TypeError at construction", () => {
    expect(() => compression({ threshold: -1 })).toThrow(TypeError);
  });
});

describe("a 304 keeps the Vary of its 200 (RFC 9110 §15.4.5)", () => {
  // The coding is decided on the 200 before its validators and preconditions, so the 304 that
  // takes its place carries the Vary the 200 would have sent. A validators step as small as a
  // test can make it: a tag of the bytes and their coding, Last-Modified, If-None-Match and
  // If-Modified-Since.
  const validators: Validators = {
    validate(_request, value, coding, lastModified) {
      if (value.fields.etag == null && value.body instanceof Uint8Array) {
        const hash = createHash("sha256").update(value.body).digest("base64url");
        value.fields.etag = `"${hash}${coding === "identity" ? "" : `-${coding}`}"`;
      }
      if (lastModified !== undefined) value.fields["last-modified"] = lastModified.toUTCString();
    },
    evaluate(request, value) {
      const inm = request.view.headers["if-none-match"];
      if (inm !== undefined) return inm === fieldText(value.fields.etag) ? 304 : "proceed";
      const ims = request.view.headers["if-modified-since"];
      const lm = fieldText(value.fields["last-modified"]);
      return ims !== undefined && lm !== undefined && Date.parse(ims) >= Date.parse(lm) ? 304 : "proceed";
    },
    notModified(_request, value) {
      value.status = 304;
      for (const name of ["content-type", "content-length", "content-language"]) value.fields[name] = null;
    },
    failed: () => HttpError.preconditionFailed(),
    beforeWrite: async () => {},
  };
  let dir: string;
  const file = (name: string) => join(dir, name);
  const page = () => `<!doctype html><title>x</title>${"<p>docs</p>".repeat(200)}`;
  const modified = new Date(Date.now() - 60_000);
  const fileRoutes: Record<string, Route> = {
    // Whole bytes, as res.sendFile sent them.
    "/page": () =>
      reply.bytes(readFileSync(file("page.html")), "text/html; charset=utf-8", { lastModified: modified }),
    // A stream with ranges, as express.static served it: a range is the identity bytes' (§14.1.2).
    "/static/page.html": (request) => {
      const size = page().length;
      const range = /^bytes=(\d+)-(\d*)$/.exec(String(request.view.headers.range ?? ""));
      if (range === null) {
        return reply.bytes(createReadStream(file("page.html")), "text/html; charset=utf-8", {
          lastModified: modified,
          headers: { "Accept-Ranges": "bytes" },
        });
      }
      const first = Number(range[1]);
      const last = Math.min(range[2] === "" ? size - 1 : Number(range[2]), size - 1);
      if (first >= size) {
        return reply.bytes("", "text/html; charset=utf-8", {
          status: 416,
          headers: { "Content-Range": `bytes */${size}` },
        });
      }
      return reply.bytes(
        readFileSync(file("page.html")).subarray(first, last + 1),
        "text/html; charset=utf-8",
        {
          status: 206,
          headers: { "Content-Range": `bytes ${first}-${last}/${size}`, "Accept-Ranges": "bytes" },
        },
      );
    },
    "/sent": () =>
      reply.bytes("<p>docs</p>".repeat(200), "text/html; charset=utf-8", { headers: { ETag: '"sent"' } }),
    "/static/image.png": () =>
      reply.bytes(readFileSync(file("image.png")), "image/png", { lastModified: modified }),
  };
  const fileSteps = {
    representations: representations(),
    coding: compression({ threshold: 200 }),
    validators,
  };
  let files: Listening & { client: Client };
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "svc-negotiate-"));
    writeFileSync(file("page.html"), page());
    writeFileSync(file("image.png"), Buffer.alloc(2000, 7));
    files = await onExpress(fileSteps, fileRoutes);
  });
  afterAll(async () => {
    await files.close();
    rmSync(dir, { recursive: true, force: true });
  });

  describe.each(clients)("%s", (via) => {
    const fetchRaw = async (path: string, headers: Record<string, string>, method = "GET") => {
      if (via !== "Express") {
        const res = await inMemory(fileSteps, fileRoutes)(path, { method, headers });
        return {
          res: { statusCode: res.status, headers: Object.fromEntries(res.headers) } as {
            statusCode: number;
            headers: Record<string, string | undefined>;
          },
          body: Buffer.from(await res.arrayBuffer()),
        };
      }
      const raw = await rawRequest(`${files.url}${path}`, method, headers);
      return {
        res: { statusCode: raw.status, headers: raw.headers as Record<string, string | undefined> },
        body: raw.body,
      };
    };
    const request = async (path: string, headers: Record<string, string>) =>
      (await fetchRaw(path, headers)).res;
    const revalidate = async (path: string, ae: string) => {
      const first = await request(path, { "accept-encoding": ae });
      const validator: Record<string, string> = first.headers.etag
        ? { "if-none-match": first.headers.etag }
        : { "if-modified-since": String(first.headers["last-modified"]) };
      return { first, second: await request(path, { "accept-encoding": ae, ...validator }) };
    };

    it.each([
      ["/page (whole bytes)", "gzip", "/page"],
      ["/page (whole bytes)", "identity", "/page"],
      ["/static/page.html (a stream)", "gzip", "/static/page.html"],
      ["/static/page.html (a stream)", "identity", "/static/page.html"],
      ["/sent (bytes with their own ETag)", "gzip", "/sent"],
      ["/sent (bytes with their own ETag)", "identity", "/sent"],
    ])(
      "%s revalidated with Accept-Encoding: %s → 304 with Vary: Accept-Encoding",
      async (_name, ae, path) => {
        const { first, second } = await revalidate(path, ae);
        expect(first.statusCode).toBe(200);
        expect(first.headers.vary).toMatch(/Accept-Encoding/);
        expect(second.statusCode).toBe(304);
        expect(second.headers.vary).toMatch(/Accept-Encoding/);
        expect(second.headers["content-encoding"]).toBeUndefined();
      },
    );

    it.each(["GET", "HEAD"])(
      "%s /static/page.html Range: bytes=0-999, Accept-Encoding: gzip → 206 of the identity bytes, not coded (RFC 9110 §14.4)",
      async (method) => {
        const { res, body } = await fetchRaw(
          "/static/page.html",
          { "accept-encoding": "gzip", range: "bytes=0-999" },
          method,
        );
        expect(res.statusCode).toBe(206);
        expect(res.headers["content-range"]).toBe(`bytes 0-999/${page().length}`);
        expect(res.headers["content-encoding"]).toBeUndefined();
        if (method === "GET") expect(body.toString()).toBe(page().slice(0, 1000));
      },
    );

    it("/static/page.html Range: bytes=99999-, Accept-Encoding: gzip → 416 not coded", async () => {
      const { res } = await fetchRaw("/static/page.html", {
        "accept-encoding": "gzip",
        range: "bytes=99999-",
      });
      expect(res.statusCode).toBe(416);
      expect(res.headers["content-encoding"]).toBeUndefined();
    });

    it.each(["GET", "HEAD"])(
      "%s /static/page.html, Accept-Encoding: gzip → coded, without Accept-Ranges: bytes (§14.3)",
      async (method) => {
        const coded = await fetchRaw("/static/page.html", { "accept-encoding": "gzip" }, method);
        expect(coded.res.headers["content-encoding"]).toBe("gzip");
        expect(coded.res.headers["accept-ranges"]).toBeUndefined();
        const identity = await fetchRaw("/static/page.html", { "accept-encoding": "identity" }, method);
        expect(identity.res.headers["accept-ranges"]).toBe("bytes");
      },
    );

    it("/static/image.png (not compressible) revalidated → 304 without Vary: Accept-Encoding, as its 200", async () => {
      const { first, second } = await revalidate("/static/image.png", "gzip");
      expect(first.statusCode).toBe(200);
      expect(first.headers.vary ?? "").not.toMatch(/Accept-Encoding/);
      expect(second.statusCode).toBe(304);
      expect(second.headers.vary ?? "").not.toMatch(/Accept-Encoding/);
    });
  });
});
