import { option } from "./helpers.mjs";

const PARSE =
  "`parseBody()` of `@svc/negotiate/express` (the same options in `./fastify`, `./node`, `./fetch` and `bodyReader()` of `@svc/negotiate`)";
const parseImports = 'import { parseBody } from "@svc/negotiate/express";';
const pb = ({ name, ...rest }) =>
  option({
    raiser: PARSE,
    name,
    imports: parseImports,
    call: (v) => `export const bodies = parseBody({ ${name}: ${v} });`,
    ...rest,
  });
const CORS =
  "`crossOrigin()` of `@svc/negotiate/express` (the same options in `./fastify`, `./node`, `./fetch` and `crossOriginGate()` of `@svc/negotiate`)";
const corsImports = 'import { crossOrigin } from "@svc/negotiate/express";';
const co = ({ name, base = 'origins: ["https://app.example"], ', ...rest }) =>
  option({
    raiser: CORS,
    name,
    imports: corsImports,
    call: (v) => `export const cors = crossOrigin({ ${base}${name}: ${v} });`,
    ...rest,
  });
const compressionOpt = ({ name, ...rest }) =>
  option({
    raiser: "`compression()` of `@svc/negotiate`",
    name,
    imports: 'import { compression } from "@svc/negotiate";',
    call: (v) => `export const coding = compression({ ${name}: ${v} });`,
    ...rest,
  });
const xmlOpt = ({ name, ...rest }) =>
  option({
    raiser: "`xmlRepresentation()` of `@svc/negotiate`",
    name,
    imports: 'import { xmlRepresentation } from "@svc/negotiate";',
    call: (v) => `export const xml = xmlRepresentation({ ${name}: ${v} });`,
    accepted: "an XML element name (letters, digits",
    fix: `Give \`${name}\` an XML element name: letters, digits, \`_\`, \`-\` and \`.\`, not starting with a digit or \`xml\`.`,
    ...rest,
  });
const repImports = 'import { representations } from "@svc/negotiate";';

export default {
  ERR_SVC_NEGOTIATE_OPTIONS: option({
    raiser: `${PARSE}, ${CORS}, \`representations()\`, \`compression()\``,
    name: "options",
    refused: "its options argument is not an object",
    accepted: "crossOrigin: options must be an object { origins",
    imports: `${corsImports}\n\n// The options of a configuration entry that is missing.\nconst config: Record<string, { origins: string[] }> = {};`,
    call: (v) => `export const cors = crossOrigin(${v});`,
    wrong: "config.cors!",
    right: 'config.cors ?? { origins: ["https://app.example"] }',
    fix: "Pass an object of options; `crossOrigin()` needs at least `origins`.",
  }),
  ERR_SVC_NEGOTIATE_UNKNOWN_OPTION: {
    raiser: PARSE,
    when: "construction",
    refused:
      "its options name one it does not know, a misspelling the compiler does not catch when the object is not a literal; the message names the nearest it knows",
    accepted: 'did you mean "limit"?',
    fix: "Spell the option as the message suggests.",
    wrong: `${parseImports}\n\nconst options = { types: ["json" as const], limt: "1mb" };\nexport const bodies = parseBody(options);\n`,
    right: `${parseImports}\n\nconst options = { types: ["json" as const], limit: "1mb" };\nexport const bodies = parseBody(options);\n`,
  },
  ERR_SVC_NEGOTIATE_LIMIT: pb({
    name: "limit",
    accepted: "a non-negative integer (bytes) or a size as body-parser takes it",
    wrong: '"1 megabyte"',
    right: '"1mb"',
    fix: 'Give `limit` a number of bytes or a size as body-parser writes one (`"100kb"`, `"1mb"`).',
  }),
  ERR_SVC_NEGOTIATE_DEPTH: pb({ name: "depth", accepted: "a positive integer", wrong: "0", right: "32" }),
  ERR_SVC_NEGOTIATE_TYPES: pb({
    name: "types",
    accepted: 'a non-empty array of "json", "xml", "urlencoded" and media types',
    wrong: '["text/*"]',
    right: '["json", "application/merge-patch+json"]',
    fix: 'List `"json"`, `"xml"`, `"urlencoded"` or concrete media types read as one of them (`"application/merge-patch+json"`), not ranges.',
  }),
  ERR_SVC_NEGOTIATE_TIMEOUT: pb({
    name: "timeout",
    accepted: "false or a whole number of milliseconds from 1 to 2147483647",
    wrong: "0",
    right: "30_000",
  }),
  ERR_SVC_NEGOTIATE_OTHERS: pb({
    name: "others",
    accepted: '"next" or "refuse"',
    wrong: "JSON.parse('\"reject\"')",
    right: '"refuse"',
  }),
  ERR_SVC_NEGOTIATE_EXACT_NUMBERS: pb({
    name: "exactNumbers",
    accepted: "a boolean",
    wrong: "JSON.parse('\"yes\"')",
    right: "true",
  }),
  ERR_SVC_NEGOTIATE_XML: pb({
    name: "xml",
    accepted: '{ shape?: "document" | "representation", schema?: (req) => schema }',
    wrong: 'JSON.parse("true")',
    right: '{ shape: "representation" }',
  }),
  ERR_SVC_NEGOTIATE_XML_SHAPE: pb({
    name: "xml",
    accepted: '"document" or "representation"',
    refused: "`xml.shape` is neither of the two shapes an XML body is read as",
    wrong: "{ shape: JSON.parse('\"object\"') }",
    right: '{ shape: "representation" }',
    fix: '`"document"` (the default) reads the XML as a document tree; `"representation"` as the JSON the XML representation writes.',
  }),
  ERR_SVC_NEGOTIATE_XML_SCHEMA: pb({
    name: "xml",
    accepted: 'a function (req) => JSON Schema, with shape "representation"',
    refused: '`xml.schema` was given without `shape: "representation"`, or is not a function',
    wrong: '{ schema: () => ({ type: "object" as const }) }',
    right: '{ shape: "representation", schema: () => ({ type: "object" as const }) }',
    fix: 'Give `xml.schema` with `shape: "representation"`, as a function of the request answering the JSON Schema of its body.',
  }),
  ERR_SVC_NEGOTIATE_CONTENT_CODINGS: pb({
    name: "contentCodings",
    accepted: 'an array of "gzip", "deflate", "br" and "zstd"',
    wrong: "JSON.parse('[\"x-gzip\"]')",
    right: '["gzip", "br"]',
  }),
  ERR_SVC_NEGOTIATE_FORM_MAX_PAIRS: pb({
    name: "form",
    accepted: "a positive integer",
    refused: "`form.maxPairs`, how many pairs a form body may hold, is not a positive integer",
    wrong: "{ maxPairs: 0 }",
    right: "{ maxPairs: 1000 }",
    fix: "Give `form.maxPairs` a positive integer (1000 by default).",
  }),
  ERR_SVC_NEGOTIATE_UNREAD_BODY_MAX_BYTES: pb({
    name: "unreadBody",
    accepted: "a whole number of bytes from 0 to 16777216",
    refused:
      "`unreadBody.maxBytes`, how much of a refused body is drained before the connection is kept, is not a whole number of bytes within bounds",
    wrong: "{ maxBytes: JSON.parse('\"64kb\"') }",
    right: "{ maxBytes: 65_536 }",
    fix: "Give `unreadBody.maxBytes` a whole number of bytes from 0 to 16777216.",
  }),
  ERR_SVC_NEGOTIATE_ORIGINS: co({
    name: "origins",
    base: "",
    accepted: "a non-empty array of origins (serialized http(s) origins",
    wrong: '["https://app.example/"]',
    right: '["https://app.example"]',
    fix: 'List origins as browsers send them, `scheme://host[:port]` without a path or a trailing slash; or RegExps, functions, or `"*"` (not with `credentials`).',
  }),
  ERR_SVC_NEGOTIATE_CREDENTIALS: co({
    name: "credentials",
    accepted: "must be a boolean",
    wrong: "JSON.parse('\"include\"')",
    right: "true",
    fix: "Give `credentials` `true` or `false`.",
  }),
  ERR_SVC_NEGOTIATE_PRIVATE_NETWORK: co({
    name: "privateNetwork",
    accepted: "must be a boolean",
    wrong: "JSON.parse('\"true\"')",
    right: "true",
    fix: "Give `privateNetwork` `true` or `false`.",
  }),
  ERR_SVC_NEGOTIATE_EXPOSED_HEADERS: co({
    name: "exposedHeaders",
    accepted: "must be an array of header field names (RFC 9110 §5.1 tokens)",
    wrong: '["ETag, Location"]',
    right: '["ETag", "Location"]',
    fix: "List the field names one per entry.",
  }),
  ERR_SVC_NEGOTIATE_MAX_AGE: co({
    name: "maxAge",
    accepted: "must be a non-negative whole number of seconds",
    wrong: "-1",
    right: "600",
    fix: "Give `maxAge` the seconds a browser may keep a preflight's answer, a whole number from 0.",
  }),
  ERR_SVC_NEGOTIATE_THRESHOLD: compressionOpt({
    name: "threshold",
    accepted: "a non-negative integer (bytes)",
    wrong: '"1kb" as never',
    right: "1024",
  }),
  ERR_SVC_NEGOTIATE_LEVEL: compressionOpt({
    name: "level",
    accepted: "an integer from -1 to 9 (zlib levels)",
    wrong: "11",
    right: "6",
    fix: "Give `level` a zlib level, -1 (zlib's default) or 0 to 9; Brotli's 11 is not one.",
  }),
  ERR_SVC_NEGOTIATE_ROOT: xmlOpt({ name: "root", wrong: '"employee record"', right: '"employee"' }),
  ERR_SVC_NEGOTIATE_COLLECTION_ROOT: xmlOpt({
    name: "collectionRoot",
    wrong: '"1employees"',
    right: '"employees"',
  }),
  ERR_SVC_NEGOTIATE_ESCAPE_FORMULAS: option({
    raiser: "`csvRepresentation()` of `@svc/negotiate`",
    name: "escapeFormulas",
    accepted: "true or false",
    imports: 'import { csvRepresentation } from "@svc/negotiate";',
    call: (v) => `export const csv = csvRepresentation({ escapeFormulas: ${v} });`,
    wrong: "JSON.parse('\"true\"')",
    right: "true",
  }),
  ERR_SVC_NEGOTIATE_OFFERS: option({
    raiser: "`representations()` of `@svc/negotiate`",
    name: "offers",
    accepted: "a non-empty array of { mediaType, serialize, canRepresent? } with a concrete media type",
    imports: `${repImports}\n\nconst serialize = (data: unknown) => JSON.stringify(data);`,
    call: (v) => `export const representer = representations({ offers: [{ mediaType: ${v}, serialize }] });`,
    wrong: '"application/*"',
    right: '"application/json"',
    fix: "Offer concrete media types (`application/json`), each with its `serialize`.",
  }),
  ERR_SVC_NEGOTIATE_LANGUAGES: option({
    raiser: "`representations()` of `@svc/negotiate`",
    name: "languages",
    accepted: 'an array of language tags (RFC 5646), such as ["en", "de-CH"]',
    imports: repImports,
    call: (v) => `export const representer = representations({ languages: ${v} });`,
    wrong: '["en_US"]',
    right: '["en-US", "de-CH"]',
    fix: "List language tags as RFC 5646 writes them, with hyphens (`en-US`).",
  }),
  ERR_SVC_NEGOTIATE_REPRESENTATIONS: option({
    raiser:
      "`representations()` of `@svc/negotiate` in a pipeline, for a handler's `reply(data, { representations })`",
    when: "request",
    name: "representations",
    accepted: "a non-empty array of { mediaType, serialize, canRepresent? } with a concrete media type",
    refused:
      "the representations a handler's reply offers for this response are not each a concrete media type with its `serialize` (RFC 9110 §8.3.1)",
    imports: `import { createPipeline, reply } from "@svc/kernel";
import { fetchAdapter } from "@svc/kernel/fetch";
import { representations } from "@svc/negotiate";

const svc = fetchAdapter(createPipeline({ representations: representations() }));
const serialize = (data: unknown) => JSON.stringify(data);`,
    call: (v) =>
      `export const response = await svc.respond(new Request("https://api.example/orders/7"), () =>\n  reply({ id: 7 }, { representations: [{ mediaType: ${v}, serialize }] }),\n);`,
    wrong: '"application/*"',
    right: '"application/vnd.acme.order+json"',
    fix: "Offer concrete media types, each with its `serialize`; a range (`application/*`) names no type the response could be sent as.",
  }),
};
