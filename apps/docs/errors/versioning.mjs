import { option } from "./helpers.mjs";

const RAISER =
  "`versions()` of `@svc/versioning` (the middleware of every entry, `versionedPath()` and `createPipeline({ versioning })` take the same options)";
const imports = 'import { versions } from "@svc/versioning";';
/** An option of `versions()`, next to `versions: [1, 2]` and `defaultVersion: 1`. */
const v = ({ name, base = "versions: [1, 2], defaultVersion: 1, ", ...rest }) =>
  option({
    raiser: RAISER,
    name,
    imports,
    call: (value) => `export const versioning = versions({ ${base}${name}: ${value} });`,
    ...rest,
  });
const STATUS = (strategy, fallback) =>
  v({
    name: strategy,
    accepted: "a 4xx status",
    refused: `\`${strategy}.unknownVersionStatus\`, the status of a request naming a version that is not supported, is not a client error`,
    wrong:
      strategy === "mediaType"
        ? '{ vendor: "acme", unknownVersionStatus: 200 }'
        : strategy === "custom"
          ? "{ extract: () => undefined, vary: [], unknownVersionStatus: 200 }"
          : "{ unknownVersionStatus: 200 }",
    right:
      strategy === "mediaType"
        ? '{ vendor: "acme", unknownVersionStatus: 406 }'
        : strategy === "custom"
          ? "{ extract: () => undefined, vary: [], unknownVersionStatus: 400 }"
          : `{ unknownVersionStatus: ${fallback} }`,
    fix: `Give \`${strategy}.unknownVersionStatus\` a 4xx status (its default is ${fallback}).`,
  });
const SETTINGS = (strategy, fields, right) =>
  v({
    name: strategy,
    accepted: "true, false or an object {",
    refused: `the strategy \`${strategy}\` is neither on, off, nor an object of its settings (${fields})`,
    wrong: "JSON.parse('\"on\"')",
    right,
    fix: `Give \`${strategy}\` \`true\` (its defaults), \`false\`, or an object of its settings: ${fields}.`,
  });

export default {
  ERR_SVC_VERSIONING_OPTIONS: option({
    raiser: RAISER,
    name: "options",
    refused: "its options argument is not an object",
    accepted: "an object { versions, ... }",
    imports,
    call: (value) => `export const versioning = versions(${value});`,
    wrong: 'JSON.parse("[1, 2]")',
    right: "{ versions: [1, 2], defaultVersion: 1 }",
    fix: "Pass an object with at least `versions`.",
  }),
  ERR_SVC_VERSIONING_UNKNOWN_OPTION: {
    raiser: RAISER,
    when: "construction",
    refused:
      "its options name one it does not know, a misspelling the compiler does not catch when the object is not a literal; the message names the nearest it knows",
    accepted: 'did you mean "defaultVersion"?',
    fix: "Spell the option as the message suggests.",
    wrong: `${imports}\n\nconst options = { versions: [1, 2], defaultversion: 1 };\nexport const versioning = versions(options as never);\n`,
    right: `${imports}\n\nconst options = { versions: [1, 2], defaultVersion: 1 };\nexport const versioning = versions(options);\n`,
  },
  ERR_SVC_VERSIONING_VERSIONS: v({
    name: "versions",
    base: "",
    accepted: "a non-empty array of versions of one scheme",
    wrong: "[1.0, 1.1]",
    right: '["1.0", "1.1"], defaultVersion: "1.0"',
    fix: 'List the versions in one scheme: integers (`[1, 2]`), major.minor strings (`["1.0", "1.2"]`, quoted: the number `1.10` is `1.1`) or ISO 8601 dates.',
  }),
  ERR_SVC_VERSIONING_DEFAULT_VERSION: v({
    name: "defaultVersion",
    base: "versions: [1, 2], ",
    accepted: 'one of the supported versions (1, 2) or "latest"',
    wrong: "3",
    right: '"latest"',
    refused:
      "`defaultVersion`, the version of a request that names none, is not one of `versions` (or is missing while `versions` lists more than one)",
    fix: 'Give `defaultVersion` one of `versions`, or `"latest"`; or `required: true` to answer 400 to a request naming no version.',
  }),
  ERR_SVC_VERSIONING_REQUIRED: v({
    name: "required",
    base: "versions: [1, 2], ",
    accepted: "true or false",
    wrong: "JSON.parse('\"true\"')",
    right: "true",
  }),
  ERR_SVC_VERSIONING_URI: SETTINGS("uri", "`prefix`, `unknownVersionStatus`", '{ prefix: "v" }'),
  ERR_SVC_VERSIONING_URI_PREFIX: v({
    name: "uri",
    accepted: "letters (A-Z, a-z)",
    refused: "`uri.prefix`, what comes before the version in the path (`/v1/`), is not letters",
    wrong: '{ prefix: "/v" }',
    right: '{ prefix: "v" }',
    fix: 'Give `uri.prefix` letters only: `"v"` matches `/v1/...`; the slashes are the path\'s.',
  }),
  ERR_SVC_VERSIONING_URI_UNKNOWN_VERSION_STATUS: STATUS("uri", 404),
  ERR_SVC_VERSIONING_HEADER: SETTINGS(
    "header",
    "`names`, `unknownVersionStatus`",
    '{ names: ["X-API-Version"] }',
  ),
  ERR_SVC_VERSIONING_HEADER_NAMES: v({
    name: "header",
    accepted: "a non-empty list of header field names (RFC 9110 §5.1)",
    refused:
      "`header.names`, the fields a client names its version in, is not a non-empty list of field names",
    wrong: '{ names: ["X-API-Version:"] }',
    right: '{ names: ["X-API-Version"] }',
    fix: "List the field names, without a colon or spaces (RFC 9110 §5.1 tokens).",
  }),
  ERR_SVC_VERSIONING_HEADER_UNKNOWN_VERSION_STATUS: STATUS("header", 400),
  ERR_SVC_VERSIONING_QUERY: SETTINGS("query", "`name`, `unknownVersionStatus`", '{ name: "api-version" }'),
  ERR_SVC_VERSIONING_QUERY_NAME: v({
    name: "query",
    accepted: "a query parameter name (RFC 3986 §3.4, no & = + or %)",
    refused: "`query.name`, the parameter a client names its version in, is not a parameter name",
    wrong: '{ name: "api-version=" }',
    right: '{ name: "api-version" }',
    fix: "Give the parameter's name alone, without `=`, `&`, `+` or `%`.",
  }),
  ERR_SVC_VERSIONING_QUERY_UNKNOWN_VERSION_STATUS: STATUS("query", 400),
  ERR_SVC_VERSIONING_CUSTOM: v({
    name: "custom",
    accepted: "an object { extract, vary, unknownVersionStatus? }",
    wrong: 'JSON.parse("true")',
    right: '{ extract: (req) => req.headers["x-version"]?.toString(), vary: ["X-Version"] }',
    refused: "the strategy `custom` is not an object `{ extract, vary }`",
    fix: "Give `custom` an object: `extract`, a function of the request answering its version, and `vary`, the fields it reads.",
  }),
  ERR_SVC_VERSIONING_CUSTOM_EXTRACT: v({
    name: "custom",
    accepted: "a function (request) => string | undefined",
    refused: "`custom.extract` is not a function",
    wrong: '{ extract: JSON.parse(\'"x-version"\'), vary: ["X-Version"] }',
    right: '{ extract: (req) => req.headers["x-version"]?.toString(), vary: ["X-Version"] }',
    fix: "Give `custom.extract` a function of the request that answers the version it names, or `undefined`.",
  }),
  ERR_SVC_VERSIONING_CUSTOM_VARY: v({
    name: "custom",
    accepted:
      "the list of header field names extract reads (RFC 9110 §12.5.5), [] when it reads only the URL",
    refused:
      "`custom.vary` is missing or not a list of field names: a cache that does not key on what `extract` reads would serve one client's version to another",
    wrong: '{ extract: (req) => req.headers["x-version"]?.toString(), vary: JSON.parse("null") }',
    right: '{ extract: (req) => req.headers["x-version"]?.toString(), vary: ["X-Version"] }',
    fix: "List in `custom.vary` every field `extract` reads (`[]` when it reads only the URL): they go into `Vary`.",
  }),
  ERR_SVC_VERSIONING_CUSTOM_UNKNOWN_VERSION_STATUS: STATUS("custom", 400),
  ERR_SVC_VERSIONING_MEDIA_TYPE: v({
    name: "mediaType",
    accepted: "an object { vendor, unknownVersionStatus? }",
    wrong: 'JSON.parse("true")',
    right: '{ vendor: "acme" }',
    refused: "the strategy `mediaType` is not an object `{ vendor }`",
    fix: "Give `mediaType` an object with `vendor`, the vendor tree of your media types (`application/vnd.acme.v2+json`).",
  }),
  ERR_SVC_VERSIONING_MEDIA_TYPE_VENDOR: v({
    name: "mediaType",
    accepted: 'a vendor tree name such as "svc"',
    refused: "`mediaType.vendor` is not a vendor tree name (RFC 6838 §3.2)",
    wrong: '{ vendor: "vnd.acme+json" }',
    right: '{ vendor: "acme" }',
    fix: 'Give the name that follows `vnd.` (`"acme"` for `application/vnd.acme.v2+json`), without the `vnd.` or the suffix.',
  }),
  ERR_SVC_VERSIONING_MEDIA_TYPE_UNKNOWN_VERSION_STATUS: STATUS("mediaType", 406),
  ERR_SVC_VERSIONING_STRATEGIES: v({
    name: "uri",
    accepted: "on for one of uri, header, query, custom and mediaType at least",
    refused: "every strategy is off, so no request could name a version",
    wrong: "false, header: false",
    right: "false, header: true",
    fix: "Leave one strategy on at least: `uri` and `header` are on by default.",
  }),
  ERR_SVC_VERSIONING_DEPRECATED: v({
    name: "deprecated",
    accepted: "one of the supported versions (1, 2)",
    refused: "`deprecated` is not an object of policies by version, or names a version that is not supported",
    wrong: '{ 3: { deprecation: "2026-01-01" } }',
    right: '{ 1: { deprecation: "2026-01-01" } }',
    fix: "Key `deprecated` by supported versions, each with its policy `{ deprecation, sunset?, link?, sunsetLink? }`.",
  }),
  ERR_SVC_VERSIONING_DEPRECATED_DEPRECATION: v({
    name: "deprecated",
    accepted: "a valid Date or ISO 8601 string",
    refused: "a policy's `deprecation` (the Deprecation field, RFC 9745) is not a date",
    wrong: '{ 1: { deprecation: "1 January 2026" } }',
    right: '{ 1: { deprecation: "2026-01-01" } }',
    fix: "Give an ISO 8601 date (`2026-01-01`, or a date-time with `Z` or an offset) or a valid `Date`.",
  }),
  ERR_SVC_VERSIONING_DEPRECATED_SUNSET: v({
    name: "deprecated",
    accepted: "a valid Date or ISO 8601 string",
    refused: "a policy's `sunset` (the Sunset field, RFC 8594) is not a date an HTTP-date can write",
    wrong: '{ 1: { deprecation: "2026-01-01", sunset: "next year" } }',
    right: '{ 1: { deprecation: "2026-01-01", sunset: "2027-01-01" } }',
    fix: "Give an ISO 8601 date or a valid `Date`, from year 0001 to 9999.",
  }),
  ERR_SVC_VERSIONING_DEPRECATED_LINK: v({
    name: "deprecated",
    accepted: "a URI",
    refused: "a policy's `link` (the deprecation `Link`, RFC 9745 §3) is not a URI",
    wrong: '{ 1: { deprecation: "2026-01-01", link: "<https://example.com/deprecation>" } }',
    right: '{ 1: { deprecation: "2026-01-01", link: "https://example.com/deprecation" } }',
    fix: "Give the URI alone: the angle brackets and `rel` are written by the package.",
  }),
  ERR_SVC_VERSIONING_DEPRECATED_SUNSET_LINK: v({
    name: "deprecated",
    accepted: "a URI",
    refused: "a policy's `sunsetLink` (the sunset `Link`, RFC 8594 §6) is not a URI",
    wrong: '{ 1: { deprecation: "2026-01-01", sunsetLink: "see the migration guide" } }',
    right: '{ 1: { deprecation: "2026-01-01", sunsetLink: "https://example.com/migrate" } }',
    fix: "Give the URI alone: the angle brackets and `rel` are written by the package.",
  }),
  ERR_SVC_VERSIONING_NEUTRAL: v({
    name: "neutral",
    accepted: 'a list of paths starting with "/" or RegExps',
    refused: "`neutral`, the paths every version serves alike, is not a list of paths or RegExps",
    wrong: '["health"]',
    right: '["/health", /^\\/docs\\//]',
  }),
  ERR_SVC_VERSIONING_ROUTING: v({
    name: "routing",
    accepted: "an object with the fields caseSensitive",
    refused: "`routing`, how the router compares paths (for `neutral`), is not an object",
    wrong: 'JSON.parse("true")',
    right: "{ caseSensitive: true }",
  }),
  ERR_SVC_VERSIONING_ROUTING_CASE_SENSITIVE: v({
    name: "routing",
    accepted: "true or false",
    refused: "`routing.caseSensitive` is not a boolean",
    wrong: "{ caseSensitive: JSON.parse('\"yes\"') }",
    right: "{ caseSensitive: true }",
    fix: "Give `routing.caseSensitive` the router's own setting (Express's `case sensitive routing`), `true` or `false`.",
  }),
  ERR_SVC_VERSIONING_HANDLERS: option({
    raiser: "`versioned()` of `@svc/versioning/express` (and of `./fastify`, `./node`, `./fetch`)",
    name: "handlers",
    accepted:
      "a version (1 to 999999999, major.minor such as 1.2, or an ISO 8601 date such as 2026-11-25) or default",
    refused: "a key of the handlers is not a version (nor `default`), or a handler is not a function",
    imports:
      'import type { Request, Response } from "express";\nimport { versioned } from "@svc/versioning/express";\n\nconst list = (_req: Request, res: Response) => res.json([]);',
    call: (value) => `export const route = versioned({ ${value}: list });`,
    wrong: '"v1"',
    right: "1",
    fix: 'Key the handlers by version as `versions` lists them (`1`, `"1.2"`, `"2026-11-25"`), or `default`.',
  }),
  ERR_SVC_VERSIONING_INHERIT: option({
    raiser: "`versioned()` of `@svc/versioning/express` (and of `./fastify`, `./node`, `./fetch`)",
    name: "inherit",
    accepted: "true or false",
    imports:
      'import type { Request, Response } from "express";\nimport { versioned } from "@svc/versioning/express";\n\nconst list = (_req: Request, res: Response) => res.json([]);',
    call: (value) => `export const route = versioned({ 1: list }, { inherit: ${value} });`,
    wrong: "JSON.parse('\"true\"')",
    right: "true",
  }),
};
