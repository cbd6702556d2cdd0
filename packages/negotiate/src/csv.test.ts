import { describe, expect, it } from "vitest";
import { inMemory } from "../test/core.js";
import { csv, csvRepresentation, json } from "./representation.js";
import { representations } from "./representer.js";

const hostile = [
  { id: 1, name: "=cmd|' /C calc'!A0", note: "+SUM(1,2)", balance: -5 },
  { id: 2, name: "-2+3", note: '@HYPERLINK("http://evil.example")', balance: 10 },
  { id: 3, name: "\tTAB", note: "\rCR", balance: -0.5 },
  { id: 4, name: "Ada = Lovelace", note: "plain", balance: 0 },
];

const escaped = inMemory(
  { representations: representations({ offers: [json, csv] }) },
  {
    "/customers": () => hostile,
    "/headers": () => [{ "=1+1": "x" }],
    "/values": () => ["=1+1", -3],
    "/nul": () => [{ "\u0000key": "\u0000=1+1" }],
    "/breaks": () => [{ id: 1, note: "x\n=1+1", "\nkey": "a\rb" }],
  },
);
const verbatim = inMemory(
  { representations: representations({ offers: [json, csvRepresentation({ escapeFormulas: false })] }) },
  { "/customers": () => hostile },
);

/** RFC 4180 records: quoted fields may hold commas, quotes ("") and line breaks. */
function parse(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = "";
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ",") {
      row.push(field);
      field = "";
    } else if (c === "\n" || (c === "\r" && text[i + 1] === "\n")) {
      if (c === "\r") i++;
      row.push(field);
      rows.push(row);
      row = [];
      field = "";
    } else field += c;
  }
  if (field !== "" || row.length > 0) rows.push([...row, field]);
  return rows;
}

async function csvRows(client: typeof escaped, path: string): Promise<string[][]> {
  const res = await client(path, { headers: { accept: "text/csv" } });
  expect(res.headers.get("content-type")).toBe("text/csv; charset=utf-8");
  return parse(await res.text());
}

describe("CSV formula injection (OWASP CSV Injection)", () => {
  it("a text cell starting with =, +, -, @, tab or CR → prefixed with '", async () => {
    const rows = await csvRows(escaped, `/customers`);
    expect(rows[0]).toEqual(["id", "name", "note", "balance"]);
    expect(rows[1]?.slice(1, 3)).toEqual(["'=cmd|' /C calc'!A0", "'+SUM(1,2)"]);
    expect(rows[2]?.slice(1, 3)).toEqual(["'-2+3", '\'@HYPERLINK("http://evil.example")']);
    expect(rows[3]?.slice(1, 3)).toEqual(["'\tTAB", "'\rCR"]);
    expect(rows[4]?.slice(1, 3)).toEqual(["Ada = Lovelace", "plain"]);
  });

  it("a negative number cell (-5, -0.5) is data: left as it is", async () => {
    const rows = await csvRows(escaped, `/customers`);
    expect(rows.slice(1).map((r) => r[3])).toEqual(["-5", "10", "-0.5", "0"]);
  });

  // OWASP ASVS 5.0 V1.2.10 lists the null character beside =, +, -, @ and tab.
  it("a cell or header starting with a NUL character → prefixed with '", async () => {
    expect(await csvRows(escaped, `/nul`)).toEqual([["'\u0000key"], ["'\u0000=1+1"]]);
  });

  it("a header cell starting with = → prefixed too", async () => {
    expect((await csvRows(escaped, `/headers`))[0]).toEqual(["'=1+1"]);
  });

  it("a collection of plain values: the text =1+1 is prefixed, the number -3 is not", async () => {
    expect(await csvRows(escaped, `/values`)).toEqual([["value"], ["'=1+1"], ["-3"]]);
  });

  // RFC 4180 §2.6: a field holding a line break is enclosed in double quotes. csv-stringify only
  // quotes its own record delimiter (CRLF) once one is set, so a bare LF or CR went out raw,
  // started a new record in every spreadsheet and put the text after it, unescaped, at the start
  // of a line: a formula.
  it("a cell or key holding a bare LF or CR → quoted, one record, no formula at a line start", async () => {
    const res = await escaped("/breaks", { headers: { accept: "text/csv" } });
    expect(await res.text()).toBe('id,note,"\nkey"\r\n1,"x\n=1+1","a\rb"\r\n');
  });

  // RFC 4180 §2.1: "Each record is located on a separate line, delimited by a line break (CRLF)."
  it("a collection of plain values → records delimited by CRLF, like a collection of objects", async () => {
    const res = await escaped("/values", { headers: { accept: "text/csv" } });
    expect(await res.text()).toBe("value\r\n'=1+1\r\n-3\r\n");
  });

  it("escapeFormulas: false → cells byte for byte", async () => {
    const rows = await csvRows(verbatim, `/customers`);
    expect(rows[1]?.[1]).toBe("=cmd|' /C calc'!A0");
    expect(rows[2]?.[1]).toBe("-2+3");
  });

  it.each([["yes"], [1], [null]])(
    "escapeFormulas: %j → TypeError ERR_SVC_NEGOTIATE_ESCAPE_FORMULAS",
    (value) => {
      expect(() => csvRepresentation({ escapeFormulas: value as never })).toThrow(
        expect.objectContaining({ name: "TypeError", code: "ERR_SVC_NEGOTIATE_ESCAPE_FORMULAS" }),
      );
    },
  );

  it("options: 42 → TypeError ERR_SVC_NEGOTIATE_OPTIONS", () => {
    expect(() => csvRepresentation(42 as never)).toThrow(
      expect.objectContaining({ code: "ERR_SVC_NEGOTIATE_OPTIONS" }),
    );
  });
});
