import { escapeXml } from "@svc/errors";
import { type Representation, stringifyJson } from "@svc/kernel";
import { checkBooleanOption, checkOptionNames, refusedOption } from "@svc/kernel/internal";
import { stringify } from "#csv-stringify";

/**
 * The kernel's one representation type, as `createPipeline` takes it: a media type and how to
 * turn data into it; a plain object literal is enough.
 */
export type { Representation, RepresentationBody, RepresentContext } from "@svc/kernel";

/**
 * JSON (RFC 8259), the default representation. A BigInt is written as a number with all its
 * digits (a 64-bit id past 2^53 stays exact) instead of making `JSON.stringify` throw.
 * @example representations({ offers: [json, xml] })
 * @see https://www.rfc-editor.org/rfc/rfc8259
 */
export const json: Representation = {
  mediaType: "application/json",
  serialize: (data) => stringifyJson(data),
};

const XML_NAME = /^[A-Za-z_][A-Za-z0-9._-]*$/;

// XML 1.0 (Fifth Edition) §2.3 NameStartChar and NameChar, without ":" (Namespaces in XML 1.0
// §3 gives it a meaning of its own). One character class under one quantifier: linear.
const NAME_START =
  "A-Z_a-z\u00C0-\u00D6\u00D8-\u00F6\u00F8-\u02FF\u0370-\u037D\u037F-\u1FFF\u200C\u200D\u2070-\u218F\u2C00-\u2FEF\u3001-\uD7FF\uF900-\uFDCF\uFDF0-\uFFFD\u{10000}-\u{EFFFF}";
const NAME_CHAR = `${NAME_START}\\-.0-9\u00B7\u0300-\u036F\u203F\u2040`;
const ELEMENT_NAME = new RegExp(`^[${NAME_START}][${NAME_CHAR}]*$`, "u");
const NOT_NAME_CHAR = new RegExp(`[^${NAME_CHAR}]`, "gu");

function xmlName(name: string): string {
  // Keys that are not XML names (`2fa`, `a b`) still need a well-formed element.
  return ELEMENT_NAME.test(name) && !/^xml/i.test(name) ? name : `_${name.replace(NOT_NAME_CHAR, "_")}`;
}

/**
 * A value JSON leaves out (ECMA-262 §25.5.2.2 SerializeJSONProperty: a function or a symbol is
 * `undefined`, omitted from an object and `null` in an array): no representation prints a
 * function's source code or a symbol's description.
 */
function isOmitted(value: unknown): boolean {
  return typeof value === "function" || typeof value === "symbol";
}

/**
 * The value JSON would carry: an object's own `toJSON()` result (ECMA-262 §25.5.2.2
 * SerializeJSONProperty, step 2), so a value whose fields are private to its class (a HAL resource,
 * a domain object) reads the same in XML, CSV, text and HTML as in JSON, never as an empty element.
 */
function jsonValue(value: unknown): unknown {
  if (isOmitted(value)) return undefined;
  // ECMA-262 §21.4.4.37 Date.prototype.toJSON: an invalid Date (no finite time value) is `null`;
  // a valid one stays a Date, written as its ISO text (`<time>` in HTML).
  if (value instanceof Date) return Number.isFinite(value.getTime()) ? value : null;
  if (value === null || typeof value !== "object") return value;
  const toJSON = (value as { toJSON?: unknown }).toJSON;
  return typeof toJSON === "function" ? (toJSON as () => unknown).call(value) : value;
}

/** The XML Schema instance namespace, declared on the root when an element is nil. */
const XSI_NAMESPACE = "http://www.w3.org/2001/XMLSchema-instance";

/** What one document's serialization found on the way: whether it wrote an `xsi:nil`. */
interface XmlState {
  nil: boolean;
}

function toXml(name: string, raw: unknown, depth: number, state: XmlState): string {
  const tag = xmlName(name);
  const value = jsonValue(raw);
  if (depth > 100) throw new TypeError("xml: data is nested too deeply");
  // XML Schema Part 1 §2.6.2: an element "may ... have no element or character information item
  // [children], even though its content type would otherwise require content": xsi:nil="true".
  // An empty element is the empty string, so null (and what JSON writes as null in a list) is
  // written nil, and a client tells the two apart.
  if (value === null || value === undefined) {
    state.nil = true;
    return `<${tag} xsi:nil="true"/>`;
  }
  if (Array.isArray(value)) {
    return `<${tag}>${value.map((v) => toXml("item", v, depth + 1, state)).join("")}</${tag}>`;
  }
  if (value instanceof Date) return `<${tag}>${escapeXml(value.toISOString())}</${tag}>`;
  if (typeof value === "object") {
    const inner = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined && !isOmitted(v))
      .map(([k, v]) => toXml(k, v, depth + 1, state))
      .join("");
    return `<${tag}>${inner}</${tag}>`;
  }
  return `<${tag}>${escapeXml(String(value))}</${tag}>`;
}

/**
 * Options of {@link xmlRepresentation}.
 */
export interface XmlRepresentationOptions {
  /**
   * Root element name for objects.
   * @default "resource"
   */
  root?: string;
  /**
   * Root element name for arrays (each entry becomes `<item>`).
   * @default "items"
   */
  collectionRoot?: string;
}

/**
 * An XML representation of plain objects and arrays: keys become elements, arrays become `<item>`
 * lists, text is escaped, names that are not XML names are prefixed with `_`. `null` is an element
 * with `xsi:nil="true"` (the root then declares the `xsi` namespace), `""` an empty element.
 *
 * @example xmlRepresentation({ root: "employee" })
 * @see https://www.w3.org/TR/xml/
 */
export function xmlRepresentation(options: XmlRepresentationOptions = {}): Representation {
  checkOptionNames("negotiate", options, ["root", "collectionRoot"], "xmlRepresentation");
  const root = rootName("root", options.root ?? "resource");
  const collectionRoot = rootName("collectionRoot", options.collectionRoot ?? "items");
  return {
    mediaType: "application/xml",
    serialize: (raw) => {
      const data = jsonValue(raw);
      const name = Array.isArray(data) ? collectionRoot : root;
      const state: XmlState = { nil: false };
      let body = toXml(name, data, 0, state);
      // Namespaces in XML 1.0 §3: the xsi prefix is declared where its scope covers every use, the
      // root (a valid root name is written as given, so the document starts with `<${name}`).
      if (state.nil) body = `<${name} xmlns:xsi="${XSI_NAMESPACE}"${body.slice(name.length + 1)}`;
      return `<?xml version="1.0" encoding="UTF-8"?>\n${body}`;
    },
  };
}

/** A root element's name, as given: an XML name (XML 1.0 §2.3) not starting with `xml`, so it is not rewritten. */
function rootName(option: string, name: unknown): string {
  if (typeof name !== "string" || !XML_NAME.test(name) || /^xml/i.test(name)) {
    throw refusedOption(
      "negotiate",
      option,
      name,
      'an XML element name (letters, digits, "_", "-", "."; not starting with a digit or "xml")',
      `xmlRepresentation: ${option}`,
    );
  }
  return name;
}

/** XML with `<resource>` / `<items>` roots. @example representations({ offers: [json, xml] }) @see https://www.w3.org/TR/xml/ */
export const xml: Representation = xmlRepresentation();

function isCollection(data: unknown): data is readonly unknown[] {
  return Array.isArray(data);
}

/** A cell's text: the value JSON carries (ECMA-262 §25.5.2.2: its `toJSON()` result). */
function cell(raw: unknown): string {
  return cellText(jsonValue(raw));
}

function cellText(value: unknown): string {
  if (value === null || value === undefined || isOmitted(value)) return "";
  if (value instanceof Date) return value.toISOString();
  // stringifyJson: a BigInt nested in the cell keeps every digit, where JSON.stringify throws.
  if (typeof value === "object") return stringifyJson(value);
  return String(value);
}

/** Options of {@link csvRepresentation}. */
export interface CsvRepresentationOptions {
  /**
   * Neutralise cells a spreadsheet would run as a formula: a text cell that begins with `=`, `+`,
   * `-`, `@`, a tab, a carriage return or a NUL gets a leading `'` (OWASP CSV Injection, OWASP
   * ASVS 5.0 V1.2.10), so `=cmd|' /C calc'!A0` arrives as the text `'=cmd|' /C calc'!A0`.
   * Number cells are data and are never prefixed: `-5` from a JavaScript number stays `-5`; the
   * string `"-5"` becomes `'-5`.
   * Header cells (the keys) are treated like any other text. Turn it off only for consumers that
   * are not spreadsheets and need the text byte for byte.
   * @default true
   */
  escapeFormulas?: boolean;
}

/**
 * OWASP CSV Injection: the characters that make a spreadsheet read a cell as a formula; OWASP ASVS
 * 5.0 V1.2.10 adds the null character ("'=', '+', '-', '@', '\t' (tab), and '\0' (null
 * character)").
 */
const FORMULA_START = new Set(["=", "+", "-", "@", "\t", "\r", "\0"]);

function neutralised(text: string): string {
  return FORMULA_START.has(text.charAt(0)) ? `'${text}` : text;
}

/**
 * CSV (RFC 4180) for collections, through `csv-stringify`: one header row with the union of the
 * items' keys, nested values as JSON. Offered only when the data is an array. Cells that would
 * run as spreadsheet formulas are neutralised unless `escapeFormulas: false`.
 *
 * @example representations({ offers: [json, csvRepresentation({ escapeFormulas: false })] })
 * @see https://www.rfc-editor.org/rfc/rfc4180
 * @see https://owasp.org/www-community/attacks/CSV_Injection
 */
export function csvRepresentation(options: CsvRepresentationOptions = {}): Representation {
  checkOptionNames("negotiate", options, ["escapeFormulas"], "csvRepresentation");
  checkBooleanOption(
    "negotiate",
    "escapeFormulas",
    options.escapeFormulas,
    "csvRepresentation: escapeFormulas",
  );
  const escapeFormulas = options.escapeFormulas !== false;
  const text = escapeFormulas ? neutralised : (t: string) => t;
  // A number cell is data; any text, a `toJSON()` string included, may be a formula.
  const cellOf = (raw: unknown): string => {
    const value = jsonValue(raw);
    return typeof value === "number" || typeof value === "bigint" ? cellText(value) : text(cellText(value));
  };
  return {
    mediaType: "text/csv",
    canRepresent: isCollection,
    serialize: (raw) => {
      const data = jsonValue(raw);
      return csvTable((isCollection(data) ? data : [data]).map(jsonValue), text, cellOf);
    },
  };
}

/** The union of the rows' keys, in order of first appearance: the CSV header row. */
function columnsOf(rows: readonly unknown[]): string[] {
  const columns: string[] = [];
  const seen = new Set<string>();
  for (const row of rows) {
    if (row === null || typeof row !== "object") continue;
    for (const key of Object.keys(row)) {
      if (!seen.has(key)) {
        seen.add(key);
        columns.push(key);
      }
    }
  }
  return columns;
}

/** csv-stringify options for every table, of objects or of plain values alike. */
const RFC_4180 = Object.freeze({
  // RFC 4180 §2.1: "Each record is located on a separate line, delimited by a line break (CRLF)."
  record_delimiter: "windows",
  // RFC 4180 §2.6: "Fields containing line breaks (CRLF), double quotes, and commas should be
  // enclosed in double-quotes." With a record_delimiter set, csv-stringify quotes only that
  // delimiter (CRLF) unless told otherwise; a bare LF or CR, which every spreadsheet reads as
  // a line break, would split the record and put the rest of the cell, unescaped, at the start
  // of a line (a formula after `x\n=`).
  quote_record_delimiter: true,
} as const);

/** RFC 4180 text of the rows: a header row of their keys, or one `value` column for scalars. */
function csvTable(
  rows: readonly unknown[],
  text: (t: string) => string,
  cellOf: (value: unknown) => string,
): string {
  const columns = columnsOf(rows);
  if (columns.length === 0) {
    return stringify(
      rows.map((r) => [cellOf(r)]),
      { ...RFC_4180, header: true, columns: ["value"] },
    );
  }
  const field = (r: unknown, c: string) =>
    cellOf(r !== null && typeof r === "object" ? (r as Record<string, unknown>)[c] : undefined);
  return stringify([columns.map(text), ...rows.map((r) => columns.map((c) => field(r, c)))], RFC_4180);
}

/**
 * CSV (RFC 4180) for collections with the defaults of {@link csvRepresentation}: formula cells
 * neutralised.
 *
 * @example res.represent(employees) // with Accept: text/csv
 * @see https://www.rfc-editor.org/rfc/rfc4180
 */
export const csv: Representation = csvRepresentation();

const SHORT_ESCAPES: Readonly<Record<number, string>> = {
  8: "\\b",
  9: "\\t",
  10: "\\n",
  12: "\\f",
  13: "\\r",
  92: "\\\\",
};

/**
 * A key or value of the `text/plain` form on one line: a backslash and every control character
 * (C0, DEL, C1 with NEL) and U+2028/U+2029 become JSON string escapes (RFC 8259 §7: `\\`, `\n`,
 * `\u001b`), so a value cannot start a line of its own (`Ada\nrole: admin`) and the text can
 * be read back unambiguously.
 */
function lineText(s: string): string {
  let out = "";
  let from = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0x20 && c !== 0x5c && (c < 0x7f || c > 0x9f) && c !== 0x2028 && c !== 0x2029) continue;
    out += s.slice(from, i) + (SHORT_ESCAPES[c] ?? `\\u${c.toString(16).padStart(4, "0")}`);
    from = i + 1;
  }
  return from === 0 ? s : out + s.slice(from);
}

function plainLines(raw: unknown, indent: string): string {
  const value = jsonValue(raw);
  if (value === null || value === undefined) return "";
  if (Array.isArray(value)) {
    return value
      .map(
        (v) =>
          `${indent}-${typeof v === "object" && v !== null && !(v instanceof Date) ? `\n${plainLines(v, `${indent}  `)}` : ` ${lineText(cell(v))}`}`,
      )
      .join("\n");
  }
  if (typeof value === "object" && !(value instanceof Date)) {
    return Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => !isOmitted(v))
      .map(([k, v]) =>
        typeof v === "object" && v !== null && !(v instanceof Date)
          ? `${indent}${lineText(k)}:\n${plainLines(v, `${indent}  `)}`
          : `${indent}${lineText(k)}: ${lineText(cell(v))}`,
      )
      .join("\n");
  }
  return `${indent}${lineText(cell(value))}`;
}

/**
 * `text/plain`: strings as they are, objects as indented `key: value` lines, array items as
 * `- item` lines. In keys and values, a backslash and control characters (line breaks among
 * them) are written as JSON string escapes (`\\`, `\n`, `\u0007`), so each line is one member.
 * @example res.represent("pong")
 * @see https://www.rfc-editor.org/rfc/rfc2046#section-4.1.3
 */
export const text: Representation = {
  mediaType: "text/plain",
  serialize: (data) => `${typeof data === "string" ? data : plainLines(data, "")}\n`,
};

function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function htmlValue(raw: unknown, depth: number): string {
  const value = jsonValue(raw);
  if (value === null || value === undefined) return "";
  if (depth > 50) return escapeHtml(stringifyJson(value));
  if (Array.isArray(value)) {
    const items = value as unknown[];
    // Each row as JSON carries it (ECMA-262 §25.5.2.2 SerializeJSONProperty, step 2: its
    // `toJSON()` result), as CSV reads it: a class instance with private fields is a table of the
    // fields its `toJSON()` returns, not an empty row, and a Date (or a `toJSON()` that returns
    // text) is a value in a list, not an object with no columns.
    const rows = items.map(jsonValue);
    const objects = rows.every(
      (r) => r !== null && typeof r === "object" && !Array.isArray(r) && !(r instanceof Date),
    );
    if (objects && rows.length > 0) {
      const columns = [...new Set(rows.flatMap((r) => Object.keys(r as object)))];
      const head = columns.map((c) => `<th scope="col">${escapeHtml(c)}</th>`).join("");
      const body = rows
        .map(
          (r) =>
            `<tr>${columns.map((c) => `<td>${htmlValue((r as Record<string, unknown>)[c], depth + 1)}</td>`).join("")}</tr>`,
        )
        .join("\n");
      return `<table>\n<thead><tr>${head}</tr></thead>\n<tbody>\n${body}\n</tbody>\n</table>`;
    }
    return `<ul>${items.map((r) => `<li>${htmlValue(r, depth + 1)}</li>`).join("")}</ul>`;
  }
  if (value instanceof Date) return `<time datetime="${value.toISOString()}">${value.toISOString()}</time>`;
  if (typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => !isOmitted(v))
      .map(([k, v]) => `<dt>${escapeHtml(k)}</dt><dd>${htmlValue(v, depth + 1)}</dd>`)
      .join("\n");
    return `<dl>\n${entries}\n</dl>`;
  }
  return escapeHtml(String(value));
}

/**
 * `text/html`: a small, accessible page (language attribute, title, a `<table>` with column
 * headers for collections, a description list for objects), everything escaped.
 *
 * @example res.represent(employees) // with Accept: text/html
 * @see https://html.spec.whatwg.org/
 */
export const html: Representation = {
  mediaType: "text/html",
  serialize: (raw, context) => {
    const data = jsonValue(raw);
    const lang = escapeHtml(context?.language ?? "en");
    const title = Array.isArray(data) ? `${data.length} items` : "Resource";
    return `<!doctype html>\n<html lang="${lang}">\n<head><meta charset="utf-8"><title>${title}</title></head>\n<body>\n<main>\n<h1>${title}</h1>\n${htmlValue(data, 0)}\n</main>\n</body>\n</html>\n`;
  },
};

/** The built-in representations in default order of server preference: JSON first. */
export const defaultRepresentations: readonly Representation[] = Object.freeze([json, xml, csv, text, html]);

const TEXTUAL =
  /^(?:text\/|application\/(?:[a-z0-9.!#$&^_-]+\+)?(?:json|xml)$|application\/(?:javascript|x-www-form-urlencoded)$)/;

/** True for media types whose bytes are text and so carry `charset=utf-8`. */
export function isTextual(mediaType: string): boolean {
  return TEXTUAL.test(mediaType.toLowerCase());
}
