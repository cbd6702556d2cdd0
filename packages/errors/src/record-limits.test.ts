import { SaxesParser } from "saxes";
import { describe, expect, it } from "vitest";
import { ACCEPTS, useErrorServer } from "../test/error-server.js";
import { ERROR_RECORD_LIMITS, HttpError } from "./index.js";

// A 4xx message the client may see used to go out whole (5 MB of it), as did field errors and
// extension members of any size. One record now carries at most ERROR_RECORD_LIMITS, cut on code
// points (a surrogate pair is never split) and marked "…" (U+2026), the same in every format.

const BIG = 5 * 1024 * 1024;

const serve = useErrorServer();

interface Replies {
  json: Record<string, unknown>;
  problem: Record<string, unknown>;
  xml: string;
  problemXml: string;
}

/** The four renderings, each checked: the error's status, well-formed, at most `maxBytes`. */
async function fetchAll(url: string, status: number, maxBytes = 256 * 1024): Promise<Replies> {
  const bodies: string[] = [];
  for (const accept of ACCEPTS) {
    const res = await fetch(url, { headers: { Accept: accept } });
    const body = await res.text();
    expect([accept, res.status]).toEqual([accept, status]);
    expect(Buffer.byteLength(body)).toBeLessThanOrEqual(maxBytes);
    expect(body).not.toMatch(/[\uD800-\uDFFF]/u); // no lone surrogate: no pair was split
    if (accept.endsWith("xml")) new SaxesParser({ xmlns: true }).write(body).close();
    bodies.push(body);
  }
  const [json, problem, xml, problemXml] = bodies as [string, string, string, string];
  return { json: JSON.parse(json), problem: JSON.parse(problem), xml, problemXml };
}

function codePoints(text: unknown): number {
  return [...String(text)].length;
}

describe("ERROR_RECORD_LIMITS", () => {
  it("documented defaults", () => {
    expect(ERROR_RECORD_LIMITS).toEqual({
      message: 4096,
      fieldErrors: 100,
      fieldErrorText: 1024,
      extensionMembers: 100,
      items: 100,
      text: 1024,
      extensionText: 16384,
      extensionValues: 1000,
      depth: 32,
    });
    expect(Object.isFrozen(ERROR_RECORD_LIMITS)).toBe(true);
  });
});

describe("the message (detail) of a 4xx", () => {
  it("5 MB → 4096 code points, the last one …, in every format", async () => {
    const url = await serve(() => HttpError.badRequest("x".repeat(BIG)));
    const { json, problem, xml, problemXml } = await fetchAll(url, 400);
    const cut = `${"x".repeat(4095)}…`;
    expect(json.message).toBe(cut);
    expect(problem.detail).toBe(cut);
    expect(xml).toContain(`<message>${cut}</message>`);
    expect(problemXml).toContain(`<detail>${cut}</detail>`);
  });

  it("a cut falling inside a surrogate pair → the pair kept whole or left out, never split", async () => {
    const text = `a${"\u{1F600}".repeat(6000)}`; // the 4096th code unit is a high surrogate
    const url = await serve(() => HttpError.badRequest(text));
    const { json, problem } = await fetchAll(url, 400);
    expect(json.message).toBe(`a${"\u{1F600}".repeat(4094)}…`);
    expect(codePoints(json.message)).toBe(4096);
    expect(problem.detail).toBe(json.message);
  });

  it.each([
    ["exactly 4096 code points", "y".repeat(4096)],
    ["4096 code points of astral characters (8192 code units)", "\u{1F600}".repeat(4096)],
    ["a short message", "Employee 42 does not exist"],
  ])("%s → unchanged, no mark", async (_, text) => {
    const url = await serve(() => HttpError.badRequest(text));
    const { json, problem, xml } = await fetchAll(url, 400);
    expect(json.message).toBe(text);
    expect(problem.detail).toBe(text);
    expect(xml).toContain(`<message>${text}</message>`);
  });

  it("the error itself keeps the whole text (for the logger)", () => {
    expect(HttpError.badRequest("x".repeat(BIG)).message.length).toBe(BIG);
  });
});

describe("field errors", () => {
  it("5000 entries → the first 100, then { field: …, message: … }, in every format", async () => {
    const errors = Array.from({ length: 5000 }, (_, i) => ({ field: `f${i}`, message: "is required" }));
    const url = await serve(() => HttpError.badRequest("Invalid", { errors }));
    const { json, problem, xml, problemXml } = await fetchAll(url, 400);
    const expected = [...errors.slice(0, 100), { field: "…", message: "…" }];
    expect(json.errors).toEqual(expected);
    expect(problem.errors).toEqual(expected);
    for (const doc of [xml, problemXml]) {
      expect(doc.match(/<error><field>/g)).toHaveLength(101);
      expect(doc).toContain(
        "<error><field>f99</field><message>is required</message></error><error><field>…</field><message>…</message></error></errors>",
      );
    }
  });

  it("a 5 MB field and message → 1024 code points each, marked", async () => {
    const url = await serve(() =>
      HttpError.badRequest("Invalid", { errors: [{ field: "f".repeat(BIG), message: "m".repeat(BIG) }] }),
    );
    const { json, problem } = await fetchAll(url, 400);
    const expected = [{ field: `${"f".repeat(1023)}…`, message: `${"m".repeat(1023)}…` }];
    expect(json.errors).toEqual(expected);
    expect(problem.errors).toEqual(expected);
  });

  it("exactly 100 entries → unchanged", async () => {
    const errors = Array.from({ length: 100 }, (_, i) => ({ field: `f${i}`, message: "is required" }));
    const url = await serve(() => HttpError.badRequest("Invalid", { errors }));
    expect((await fetchAll(url, 400)).json.errors).toEqual(errors);
  });
});

describe("extension members", () => {
  it("more than 100 members → TypeError ERR_SVC_ERRORS_EXTENSIONS; 100 accepted", () => {
    const members = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`m${i}`, i]));
    expect(() => HttpError.conflict("x", { extensions: members(101) })).toThrow(
      expect.objectContaining({ name: "TypeError", code: "ERR_SVC_ERRORS_EXTENSIONS" }),
    );
    expect(Object.keys(HttpError.conflict("x", { extensions: members(100) }).extensions ?? {})).toHaveLength(
      100,
    );
  });

  it("a 5 MB string → 1024 code points, marked, in every format; the status kept", async () => {
    const url = await serve(() => new HttpError(503, undefined, { extensions: { note: "n".repeat(BIG) } }));
    const { json, problem, xml, problemXml } = await fetchAll(url, 503);
    const cut = `${"n".repeat(1023)}…`;
    expect(json.note).toBe(cut);
    expect(problem.note).toBe(cut);
    expect(xml).toContain(`<note>${cut}</note>`);
    expect(problemXml).toContain(`<note>${cut}</note>`);
  });

  it("an array of 100000 numbers → the first 100, then the item …", async () => {
    const list = Array.from({ length: 100_000 }, (_, i) => i);
    const url = await serve(() => HttpError.conflict("taken", { extensions: { list } }));
    const { json, problem, xml } = await fetchAll(url, 409);
    expect(json.list).toEqual([...list.slice(0, 100), "…"]);
    expect(problem.list).toEqual(json.list);
    expect(xml).toContain("<i>98</i><i>99</i><i>…</i></list>");
  });

  it("an object of 1000 members → … as a whole; one of 100 members kept", async () => {
    const members = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, i]));
    const url = await serve(() =>
      HttpError.conflict("taken", { extensions: { wide: members(1000), fits: members(100) } }),
    );
    const { json, problem, xml } = await fetchAll(url, 409);
    expect(json.wide).toBe("…");
    expect(json.fits).toEqual(members(100));
    expect(problem.wide).toBe("…");
    expect(xml).toContain("<wide>…</wide>");
  });

  it("a member name of 5 MB inside an object → cut to 1024 code points, marked", async () => {
    const url = await serve(() =>
      HttpError.conflict("taken", { extensions: { map: { ["k".repeat(BIG)]: 1 } } }),
    );
    const { json, problem } = await fetchAll(url, 409);
    expect(json.map).toEqual({ [`${"k".repeat(1023)}…`]: 1 });
    expect(problem.map).toEqual(json.map);
  });

  it("100 strings of 1000 characters → 16384 code points of text in all, the rest cut and marked", async () => {
    const texts = Array.from({ length: 100 }, () => "t".repeat(1000));
    const url = await serve(() => HttpError.conflict("taken", { extensions: { texts } }));
    const { json, problem, xml } = await fetchAll(url, 409);
    const sent = json.texts as string[];
    expect(sent).toHaveLength(100);
    expect(sent.slice(0, 16)).toEqual(texts.slice(0, 16));
    // 16 × 1000 = 16000 of 16384: 384 left for the 17th.
    expect(sent[16]).toBe(`${"t".repeat(383)}…`);
    expect(sent.slice(17)).toEqual(Array(83).fill("…"));
    expect(problem.texts).toEqual(sent);
    expect(xml).toContain(`<i>${"t".repeat(383)}…</i><i>…</i>`);
  });

  it("100 × 100 × 100 numbers (a million values) → 1000 values in all, then …", async () => {
    const cube = Array.from({ length: 100 }, () => Array.from({ length: 100 }, () => Array(100).fill(7)));
    const url = await serve(() => HttpError.conflict("taken", { extensions: { cube } }));
    const { json, problem, xml } = await fetchAll(url, 409);
    const flat = JSON.stringify(json.cube);
    expect(flat.match(/7/g)?.length).toBeLessThan(1000);
    expect(flat).toContain('"…"');
    expect(problem.cube).toEqual(json.cube);
    expect(xml.match(/<i>7<\/i>/g)?.length).toBe(flat.match(/7/g)?.length);
  });
});
