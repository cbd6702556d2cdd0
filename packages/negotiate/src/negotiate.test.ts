import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { get as httpGet, type IncomingMessage } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { brotliDecompressSync, gunzipSync, gzipSync } from "node:zlib";
import { errorHandler, HttpError } from "@svc/errors";
import { type Listening, listen } from "@svc/test-utils";
import express from "express";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseBody } from "./body.js";
import { negotiate } from "./negotiate.js";
import { csv, type Representation } from "./representation.js";

const employee = { id: 42, name: "Ada <Lovelace> & co", department: "R&D", salary: 1000 };
const employees = [employee, { id: 43, name: 'Grace, "Amazing"', department: "Navy", salary: 2000 }];
const pdf: Representation = {
  mediaType: "application/pdf",
  serialize: () => new Uint8Array([0x25, 0x50, 0x44, 0x46, 0x2d, 0x00, 0xff]),
};

let server: Listening;
beforeAll(async () => {
  const app = express();
  app.use(negotiate({ languages: ["en", "de"], compression: { threshold: 200 } }));
  app.get("/employees/42", (_req, res) => res.represent(employee));
  app.get("/employees", (_req, res) => res.represent(employees));
  // As @svc/versioning's media-type strategy does: the response declares its vendor type first.
  app.get("/labelled-json", (_req, res) => res.type("application/vnd.svc.v2+json").represent(employee));
  app.get("/labelled-xml", (_req, res) => res.type("application/vnd.svc.v2+xml").represent(employee));
  app.get("/nullable", (_req, res) =>
    res.represent({ id: 1, managerId: null, note: "", tags: [null, ""], gone: undefined }),
  );
  app.get("/nothing", (_req, res) => res.represent(null));
  app.get("/nulls", (_req, res) => res.represent([null, ""]));
  app.get("/longs", (_req, res) => res.represent([{ id: 9223372036854775807n, name: "x" }]));
  app.get("/big", (_req, res) =>
    res.represent(Array.from({ length: 50 }, (_, i) => ({ ...employee, id: i }))),
  );
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
  app.get("/with-code", (_req, res) => res.represent(withCode, { add: [csv] }));
  app.get("/code-list", (_req, res) => res.represent([withCode, () => "SOURCE-MARKER"], { add: [csv] }));
  app.get("/forged", (_req, res) =>
    res.represent({
      name: "Ada\nrole: admin",
      "x\r\nrole": "admin",
      tags: ["a\n- b", "C:\\tmp"],
      bell: "\u0007\u2028",
    }),
  );
  app.get("/report", (_req, res) => res.represent(employee, { only: ["application/json"], add: [pdf] }));
  app.get("/decision", (_req, res) => {
    res.json({
      mediaType: res.negotiation.mediaType ?? null,
      language: res.negotiation.language,
      encoding: res.negotiation.encoding,
    });
  });
  app.get("/no-transform", (_req, res) => {
    res.setHeader("Cache-Control", "no-transform");
    return res.represent(Array.from({ length: 50 }, () => employee));
  });
  // Two Cache-Control field lines: one list of directives (RFC 9110 §5.3).
  app.get("/no-transform-lines", (_req, res) => {
    res.setHeader("Cache-Control", ["public, max-age=60", "No-Transform"]);
    return res.represent(Array.from({ length: 50 }, () => employee));
  });
  app.get("/precoded/:order", (req, res) => {
    // A handler serving bytes it coded itself, setting ETag before or after Content-Encoding.
    const bytes = gzipSync(Buffer.from('{"id":1}'));
    if (req.params.order === "tag-first") res.setHeader("ETag", '"precoded"');
    res.setHeader("Content-Type", "application/json");
    res.setHeader("Content-Encoding", "gzip");
    if (req.params.order === "tag-last") res.setHeader("ETag", '"precoded"');
    res.end(bytes);
  });
  app.get("/write-head", (_req, res) => {
    res.writeHead(200, { "Content-Type": "application/json" }).end("{}");
  });
  app.get("/failing", (_req, res) =>
    res.represent(employee, {
      representations: [
        {
          mediaType: "application/json",
          serialize: () => {
            throw HttpError.unprocessable("nope");
          },
        },
      ],
    }),
  );
  app.post("/employees", parseBody({ limit: 1000, depth: 5, others: "refuse" }), (req, res) => {
    res.status(201).json({ received: req.body ?? null });
  });
  app.patch("/employees/42", parseBody({ types: ["json"], others: "refuse" }), (req, res) => {
    res.json({ received: req.body ?? null });
  });
  app.use(errorHandler({ logger: { error: () => {} } }));
  server = await listen(app);
});
afterAll(() => server.close());

const get = (path: string, headers: Record<string, string> = {}) =>
  fetch(`${server.url}${path}`, { headers: { "accept-encoding": "identity", ...headers } });

describe("res.represent: functions and symbols in the data", () => {
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

describe("res.represent: media types", () => {
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
    expect(res.headers.get("content-type")).toBe(type);
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

  it("a serializer's HttpError reaches the error handler", async () => {
    const res = await get("/failing");
    expect(res.status).toBe(422);
  });

  it("exposes the decision to handlers", async () => {
    const res = await get("/decision", {
      accept: "application/xml;q=0.5, text/plain",
      "accept-language": "de-CH",
    });
    expect(await res.json()).toEqual({
      mediaType: { offer: "text/plain", mediaType: "text/plain", q: 1 },
      language: "de",
      encoding: "identity",
    });
  });
});

describe("res.represent: BigInt values", () => {
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
  it("gzip above the threshold → gzip, Vary: Accept-Encoding once", async () => {
    const res = await get("/big", { "accept-encoding": "gzip" });
    expect(res.headers.get("content-encoding")).toBe("gzip");
    expect(res.headers.get("vary")).toBe("Accept, Accept-Language, Accept-Encoding");
    expect(res.headers.get("content-length")).toBeNull();
  });

  it("br preferred by the client → br; body decodes to the JSON", async () => {
    const raw = await new Promise<{ headers: Record<string, unknown>; body: Buffer }>((resolve, reject) => {
      import("node:http").then(({ get: httpGet }) => {
        httpGet(`${server.url}/big`, { headers: { "accept-encoding": "br;q=1, gzip;q=0.5" } }, (res) => {
          const chunks: Buffer[] = [];
          res.on("data", (c: Buffer) => chunks.push(c));
          res.on("end", () => resolve({ headers: res.headers, body: Buffer.concat(chunks) }));
        }).on("error", reject);
      });
    });
    expect(raw.headers["content-encoding"]).toBe("br");
    expect(JSON.parse(brotliDecompressSync(raw.body).toString())).toHaveLength(50);
  });

  it("below the threshold → identity", async () => {
    const res = await get("/employees/42", { "accept-encoding": "gzip" });
    expect(res.headers.get("content-encoding")).toBeNull();
    expect(res.headers.get("content-length")).not.toBeNull();
  });

  it("identity;q=0 with gzip → compressed even below the threshold", async () => {
    const raw = await new Promise<{ headers: Record<string, unknown>; body: Buffer }>((resolve, reject) => {
      import("node:http").then(({ get: httpGet }) => {
        httpGet(
          `${server.url}/employees/42`,
          { headers: { "accept-encoding": "identity;q=0, gzip" } },
          (res) => {
            const chunks: Buffer[] = [];
            res.on("data", (c: Buffer) => chunks.push(c));
            res.on("end", () => resolve({ headers: res.headers, body: Buffer.concat(chunks) }));
          },
        ).on("error", reject);
      });
    });
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
      const res = await fetch(`${server.url}/no-transform-lines`, {
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

describe("negotiate options", () => {
  it.each([
    [{ representations: [] }],
    [{ representations: [{ mediaType: "*/*", serialize: () => "" }] }],
    [{ languages: ["not a tag"] }],
    [{ compression: { threshold: -1 } }],
  ])("rejects %j at construction", (options) => {
    expect(() => negotiate(options as never)).toThrow(TypeError);
  });
});

describe("a 304 keeps the Vary of its 200 (RFC 9110 §15.4.5)", () => {
  // send (res.sendFile, express.static) and Express's res.send remove Content-Type before they
  // answer 304, and Vary: Accept-Encoding was decided on Content-Type.
  let files: Listening;
  let dir: string;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "svc-negotiate-"));
    writeFileSync(join(dir, "page.html"), `<!doctype html><title>x</title>${"<p>docs</p>".repeat(200)}`);
    writeFileSync(join(dir, "image.png"), Buffer.alloc(2000, 7));
    const app = express();
    app.use(negotiate({ compression: { threshold: 200 } }));
    app.get("/page", (_req, res) => res.sendFile(join(dir, "page.html")));
    app.use("/static", express.static(dir));
    app.get("/sent", (_req, res) => {
      res.setHeader("ETag", '"sent"');
      res.type("html").send("<p>docs</p>".repeat(200));
    });
    files = await listen(app);
  });
  afterAll(async () => {
    await files.close();
    rmSync(dir, { recursive: true, force: true });
  });
  // node:http rather than fetch: send and fresh refuse a 304 to `Cache-Control: no-cache`.
  const request = (path: string, headers: Record<string, string>) =>
    new Promise<IncomingMessage>((resolve, reject) => {
      httpGet(`${files.url}${path}`, { headers }, (res) => {
        res.resume();
        res.on("end", () => resolve(res));
      }).on("error", reject);
    });
  const revalidate = async (path: string, ae: string) => {
    const first = await request(path, { "accept-encoding": ae });
    const validator: Record<string, string> = first.headers.etag
      ? { "if-none-match": first.headers.etag }
      : { "if-modified-since": String(first.headers["last-modified"]) };
    return { first, second: await request(path, { "accept-encoding": ae, ...validator }) };
  };

  it.each([
    ["/page (res.sendFile)", "gzip", "/page"],
    ["/page (res.sendFile)", "identity", "/page"],
    ["/static/page.html (express.static)", "gzip", "/static/page.html"],
    ["/static/page.html (express.static)", "identity", "/static/page.html"],
    ["/sent (res.send with a fresh ETag)", "gzip", "/sent"],
    ["/sent (res.send with a fresh ETag)", "identity", "/sent"],
  ])("%s revalidated with Accept-Encoding: %s → 304 with Vary: Accept-Encoding", async (_name, ae, path) => {
    const { first, second } = await revalidate(path, ae);
    expect(first.statusCode).toBe(200);
    expect(first.headers.vary).toMatch(/Accept-Encoding/);
    expect(second.statusCode).toBe(304);
    expect(second.headers.vary).toMatch(/Accept-Encoding/);
    expect(second.headers["content-encoding"]).toBeUndefined();
  });
  const fetchRaw = (path: string, headers: Record<string, string>, method = "GET") =>
    new Promise<{ res: IncomingMessage; body: Buffer }>((resolve, reject) => {
      httpGet(`${files.url}${path}`, { headers, method }, (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => resolve({ res, body: Buffer.concat(chunks) }));
      }).on("error", reject);
    });
  const page = () => `<!doctype html><title>x</title>${"<p>docs</p>".repeat(200)}`;

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
    const { res } = await fetchRaw("/static/page.html", { "accept-encoding": "gzip", range: "bytes=99999-" });
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
