import { listen } from "@svc/test-utils";
import express, { type Express } from "express";
import { SaxesParser } from "saxes";
import { afterEach, describe, expect, it } from "vitest";
import { errorHandler } from "./express.js";
import { HttpError } from "./index.js";

// XML 1.0 §2.3: "Names beginning with the string "xml", or with any string which would match
// (('X'|'x') ('M'|'m') ('L'|'l')), are reserved for standardization in this or future versions of
// this specification." Namespaces in XML 1.0 §3 gives `xmlns` and the `xml` prefix their meaning.
// An extension member becomes an element named after it (RFC 9457 Appendix B), so no name may
// start with "xml" in any case: refused at the top (as a name that is no XML name is), left out of
// the XML when nested (as such a nested name is), kept in JSON.

let closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(closers.map((c) => c()));
  closers = [];
});

async function serve(setup: (app: Express) => void): Promise<string> {
  const app = express();
  setup(app);
  app.use(errorHandler({ logger: { error() {} } }));
  const server = await listen(app);
  closers.push(server.close);
  return server.url;
}

interface Element {
  uri: string;
  local: string;
  path: string;
}

/** Parses `xml` with saxes, namespace-aware: throws unless well-formed and namespace-well-formed. */
function parse(xml: string): Element[] {
  const parser = new SaxesParser({ xmlns: true });
  const elements: Element[] = [];
  const stack: string[] = [];
  parser.on("opentag", (tag) => {
    stack.push(tag.local ?? tag.name);
    elements.push({ uri: tag.uri ?? "", local: tag.local ?? tag.name, path: stack.join("/") });
    if (tag.isSelfClosing) stack.pop();
  });
  parser.on("closetag", (tag) => {
    if (!tag.isSelfClosing) stack.pop();
  });
  parser.write(xml).close();
  return elements;
}

describe("extension names beginning with xml (XML 1.0 §2.3)", () => {
  it.each([["xml"], ["xmlns"], ["XMLNS"], ["xmlVersion"], ["XmlData"], ["xMl_1"], ["XML"]])(
    "new HttpError(400, msg, { extensions: { %s: 1 } }) → TypeError ERR_SVC_ERRORS_EXTENSIONS",
    (name) => {
      expect(() => new HttpError(400, "bad", { extensions: { [name]: 1 } })).toThrow(
        expect.objectContaining({ name: "TypeError", code: "ERR_SVC_ERRORS_EXTENSIONS" }),
      );
    },
  );

  it.each([["x"], ["xm"], ["xm_l"], ["xylophone"], ["mxl"], ["dataXml"], ["x1ml"]])(
    "new HttpError(400, msg, { extensions: { %s: 1 } }) → accepted",
    (name) => {
      expect(new HttpError(400, "bad", { extensions: { [name]: 1 } }).extensions).toEqual({ [name]: 1 });
    },
  );

  const nested = (app: Express) =>
    app.get("/x", () => {
      throw HttpError.conflict("taken", {
        extensions: {
          holder: {
            xmlns: "urn:evil",
            "xmlns:xsi": "urn:evil",
            XMLSchema: 1,
            xml_lang: "en",
            ok: 2,
            list: [{ xmlBase: 3, fine: 4 }],
          },
        },
      });
    });

  it.each([
    ["application/xml", "", "error/holder"],
    ["application/problem+xml", "urn:ietf:rfc:7807", "problem/holder"],
  ])(
    "nested members xmlns, XMLSchema, xml_lang, xmlBase, Accept: %s → left out, the rest kept, parsed by saxes",
    async (accept, uri, holder) => {
      const url = await serve(nested);
      const res = await fetch(`${url}/x`, { headers: { Accept: accept } });
      expect(res.status).toBe(409);
      const elements = parse(await res.text());
      expect(elements.filter((e) => /^xml/i.test(e.local))).toEqual([]);
      expect(elements.every((e) => e.uri === uri)).toBe(true);
      expect(elements.filter((e) => e.path.startsWith(`${holder}/`)).map((e) => e.path)).toEqual([
        `${holder}/ok`,
        `${holder}/list`,
        `${holder}/list/i`,
        `${holder}/list/i/fine`,
      ]);
    },
  );

  it("the same nested members, Accept: application/json → all kept", async () => {
    const url = await serve(nested);
    const res = await fetch(`${url}/x`);
    expect(((await res.json()) as { holder: unknown }).holder).toEqual({
      xmlns: "urn:evil",
      "xmlns:xsi": "urn:evil",
      XMLSchema: 1,
      xml_lang: "en",
      ok: 2,
      list: [{ xmlBase: 3, fine: 4 }],
    });
  });

  it.each([["application/xml"], ["application/problem+xml"]])(
    "a route throwing HttpError with extension xmlns, Accept: %s → the 500 record, well-formed, no <xmlns>",
    async (accept) => {
      const url = await serve((app) =>
        app.get("/x", () => {
          throw HttpError.conflict("taken", { extensions: { xmlns: "urn:evil" } });
        }),
      );
      const res = await fetch(`${url}/x`, { headers: { Accept: accept } });
      expect(res.status).toBe(500);
      const text = await res.text();
      expect(parse(text).filter((e) => /^xml/i.test(e.local))).toEqual([]);
      expect(text).not.toContain("urn:evil");
    },
  );

  it("another copy's HttpError (by its brand) with extension XMLdata → the 500 record", async () => {
    const url = await serve((app) =>
      app.get("/x", () => {
        throw Object.assign(new Error("taken"), {
          status: 409,
          expose: true,
          headers: {},
          extensions: { XMLdata: "<x/>" },
          [Symbol.for("@svc/errors.HttpError")]: true,
        });
      }),
    );
    const res = await fetch(`${url}/x`, { headers: { Accept: "application/xml" } });
    expect(res.status).toBe(500);
    expect(parse(await res.text()).some((e) => e.local === "XMLdata")).toBe(false);
  });
});
