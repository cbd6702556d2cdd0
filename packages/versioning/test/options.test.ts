import { describeOptions, type OptionCase } from "@svc/test-utils";
import { versioned } from "../src/express.js";
import { deprecationHeaders, versions as versioning, versionResolver } from "../src/index.js";

const versions = [1, 2];
const handler = () => undefined;
const policy = { deprecation: "2026-01-01T00:00:00Z" };

const rows: OptionCase[] = [
  [
    "versions(options)",
    () => versioning(undefined as never),
    "ERR_SVC_VERSIONING_OPTIONS",
    /versions: options must be an object \{ versions, \.\.\. \}, got undefined/,
    () => versioning({ versions, defaultVersion: 1 }),
  ],
  [
    "versions: unknown name",
    () => versioning({ versions, defaultVerison: 1 } as never),
    "ERR_SVC_VERSIONING_UNKNOWN_OPTION",
    /versions: unknown option "defaultVerison" \(did you mean "defaultVersion"\?\)/,
    () => versioning({ versions, defaultVersion: 1 }),
  ],
  [
    "versions: versions",
    () => versioning({ versions: "1,2" as never }),
    "ERR_SVC_VERSIONING_VERSIONS",
    /versions: versions must be a non-empty array of versions of one scheme: integers from 1 to 999999999 .*, got "1,2"/,
    () => versioning({ versions: [1] }),
  ],
  [
    "versions: defaultVersion",
    () => versioning({ versions, defaultVersion: 3 }),
    "ERR_SVC_VERSIONING_DEFAULT_VERSION",
    /versions: defaultVersion must be one of the supported versions \(1, 2\) or "latest", got 3/,
    () => versioning({ versions, defaultVersion: 2 }),
  ],
  [
    "versions: defaultVersion (omitted with two versions)",
    () => versioning({ versions }),
    "ERR_SVC_VERSIONING_DEFAULT_VERSION",
    /versions: defaultVersion must be given when versions lists more than one \(1, 2\): it is the version of every request that names none; did you mean defaultVersion: 1 \(what clients naming no version were written against\) or defaultVersion: 2 \(the latest version not deprecated\), or required: true \(400 for a request naming no version\)\?, got undefined/,
    () => versioning({ versions: [1] }),
  ],
  [
    "versionResolver: defaultVersion (omitted with two versions)",
    () => versionResolver({ versions }),
    "ERR_SVC_VERSIONING_DEFAULT_VERSION",
    /defaultVersion must be given when versions lists more than one/,
    () => versionResolver({ versions, required: true }),
  ],
  [
    "versions: required",
    () => versioning({ versions, required: "yes" as never }),
    "ERR_SVC_VERSIONING_REQUIRED",
    /versions: required must be true or false, got "yes"/,
    () => versioning({ versions, required: true }),
  ],
  [
    "versions: uri",
    () => versioning({ versions, defaultVersion: 1, uri: "v" as never }),
    "ERR_SVC_VERSIONING_URI",
    /versions: uri must be true, false or an object \{ prefix\?, unknownVersionStatus\? \}, got "v"/,
    () => versioning({ versions, defaultVersion: 1, uri: false }),
  ],
  [
    "versions: uri (unknown name)",
    () => versioning({ versions, defaultVersion: 1, uri: { prefx: "v" } as never }),
    "ERR_SVC_VERSIONING_UNKNOWN_OPTION",
    /unknown option "uri.prefx" \(did you mean "uri.prefix"\?\)/,
    () => versioning({ versions, defaultVersion: 1, uri: { prefix: "version" } }),
  ],
  [
    "versions: uri.prefix",
    () => versioning({ versions, defaultVersion: 1, uri: { prefix: "v/" } }),
    "ERR_SVC_VERSIONING_URI_PREFIX",
    /versions: uri.prefix must be letters \(A-Z, a-z\), got "v\/"/,
    () => versioning({ versions, defaultVersion: 1, uri: { prefix: "V" } }),
  ],
  [
    "versions: uri.unknownVersionStatus",
    () => versioning({ versions, defaultVersion: 1, uri: { unknownVersionStatus: 500 } }),
    "ERR_SVC_VERSIONING_URI_UNKNOWN_VERSION_STATUS",
    /versions: uri.unknownVersionStatus must be a 4xx status, got 500/,
    () => versioning({ versions, defaultVersion: 1, uri: { unknownVersionStatus: 400 } }),
  ],
  [
    "versions: header",
    () => versioning({ versions, defaultVersion: 1, header: "API-Version" as never }),
    "ERR_SVC_VERSIONING_HEADER",
    /versions: header must be true, false or an object \{ names\?, unknownVersionStatus\? \}, got "API-Version"/,
    () => versioning({ versions, defaultVersion: 1, header: true }),
  ],
  [
    "versions: header.names",
    () => versioning({ versions, defaultVersion: 1, header: { names: "API-Version" as never } }),
    "ERR_SVC_VERSIONING_HEADER_NAMES",
    /versions: header.names must be a non-empty list of header field names \(RFC 9110 §5.1\), got "API-Version"/,
    () => versioning({ versions, defaultVersion: 1, header: { names: ["API-Version"] } }),
  ],
  [
    "versions: header.unknownVersionStatus",
    () => versioning({ versions, defaultVersion: 1, header: { unknownVersionStatus: "400" as never } }),
    "ERR_SVC_VERSIONING_HEADER_UNKNOWN_VERSION_STATUS",
    /must be a 4xx status, got "400"/,
    () => versioning({ versions, defaultVersion: 1, header: { unknownVersionStatus: 422 } }),
  ],
  [
    "versions: mediaType",
    () => versioning({ versions, defaultVersion: 1, mediaType: "svc" as never }),
    "ERR_SVC_VERSIONING_MEDIA_TYPE",
    /versions: mediaType must be an object \{ vendor, unknownVersionStatus\? \}, got "svc"/,
    () => versioning({ versions, defaultVersion: 1, mediaType: { vendor: "svc" } }),
  ],
  [
    "versions: mediaType (unknown name)",
    () => versioning({ versions, defaultVersion: 1, mediaType: { vendor: "svc", vnd: "x" } as never }),
    "ERR_SVC_VERSIONING_UNKNOWN_OPTION",
    /unknown option "mediaType.vnd"/,
    () => versioning({ versions, defaultVersion: 1, mediaType: { vendor: "svc" } }),
  ],
  [
    "versions: mediaType.vendor",
    () => versioning({ versions, defaultVersion: 1, mediaType: { vendor: "my vendor" } }),
    "ERR_SVC_VERSIONING_MEDIA_TYPE_VENDOR",
    /versions: mediaType.vendor must be a vendor tree name such as "svc", got "my vendor"/,
    () => versioning({ versions, defaultVersion: 1, mediaType: { vendor: "acme.api" } }),
  ],
  [
    "versions: mediaType.unknownVersionStatus",
    () =>
      versioning({ versions, defaultVersion: 1, mediaType: { vendor: "svc", unknownVersionStatus: 200 } }),
    "ERR_SVC_VERSIONING_MEDIA_TYPE_UNKNOWN_VERSION_STATUS",
    /got 200/,
    () =>
      versioning({ versions, defaultVersion: 1, mediaType: { vendor: "svc", unknownVersionStatus: 415 } }),
  ],
  [
    "versions: query",
    () => versioning({ versions, defaultVersion: 1, query: "api-version" as never }),
    "ERR_SVC_VERSIONING_QUERY",
    /versions: query must be true, false or an object \{ name\?, unknownVersionStatus\? \}, got "api-version"/,
    () => versioning({ versions, defaultVersion: 1, query: true }),
  ],
  [
    "versions: query (unknown name)",
    () => versioning({ versions, defaultVersion: 1, query: { nmae: "v" } as never }),
    "ERR_SVC_VERSIONING_UNKNOWN_OPTION",
    /versions: unknown option "query\.nmae" \(did you mean "query\.name"\?\)/,
    () => versioning({ versions, defaultVersion: 1, query: { name: "v" } }),
  ],
  [
    "versions: query.name",
    () => versioning({ versions, defaultVersion: 1, query: { name: "api version" } }),
    "ERR_SVC_VERSIONING_QUERY_NAME",
    /versions: query\.name must be a query parameter name \(RFC 3986 §3\.4, no & = \+ or %\), got "api version"/,
    () => versioning({ versions, defaultVersion: 1, query: { name: "api_version" } }),
  ],
  [
    "versions: query.unknownVersionStatus",
    () => versioning({ versions, defaultVersion: 1, query: { unknownVersionStatus: 500 } }),
    "ERR_SVC_VERSIONING_QUERY_UNKNOWN_VERSION_STATUS",
    /got 500/,
    () => versioning({ versions, defaultVersion: 1, query: { unknownVersionStatus: 404 } }),
  ],
  [
    "versions: custom",
    () => versioning({ versions, defaultVersion: 1, custom: (() => "1") as never }),
    "ERR_SVC_VERSIONING_CUSTOM",
    /versions: custom must be an object \{ extract, vary, unknownVersionStatus\? \}/,
    () => versioning({ versions, defaultVersion: 1, custom: { extract: () => "1", vary: [] } }),
  ],
  [
    "versions: custom (unknown name)",
    () =>
      versioning({
        versions,
        defaultVersion: 1,
        custom: { extract: () => "1", vary: [], varry: [] } as never,
      }),
    "ERR_SVC_VERSIONING_UNKNOWN_OPTION",
    /versions: unknown option "custom\.varry" \(did you mean "custom\.vary"\?\)/,
    () => versioning({ versions, defaultVersion: 1, custom: { extract: () => "1", vary: [] } }),
  ],
  [
    "versions: custom.extract",
    () => versioning({ versions, defaultVersion: 1, custom: { extract: "x-version", vary: [] } as never }),
    "ERR_SVC_VERSIONING_CUSTOM_EXTRACT",
    /versions: custom\.extract must be a function \(request\) => string \| undefined, got "x-version"/,
    () => versioning({ versions, defaultVersion: 1, custom: { extract: () => undefined, vary: [] } }),
  ],
  [
    "versions: custom.vary (omitted)",
    () => versioning({ versions, defaultVersion: 1, custom: { extract: () => "1" } as never }),
    "ERR_SVC_VERSIONING_CUSTOM_VARY",
    /versions: custom\.vary must be the list of header field names extract reads \(RFC 9110 §12\.5\.5\), \[\] when it reads only the URL, got undefined/,
    () => versioning({ versions, defaultVersion: 1, custom: { extract: () => "1", vary: ["X-Tenant"] } }),
  ],
  [
    "versions: custom.vary (not a field name)",
    () => versioning({ versions, defaultVersion: 1, custom: { extract: () => "1", vary: ["X Tenant"] } }),
    "ERR_SVC_VERSIONING_CUSTOM_VARY",
    /got \["X Tenant"\]/,
    () => versioning({ versions, defaultVersion: 1, custom: { extract: () => "1", vary: ["X-Tenant"] } }),
  ],
  [
    "versions: custom.unknownVersionStatus",
    () =>
      versioning({
        versions,
        defaultVersion: 1,
        custom: { extract: () => "1", vary: [], unknownVersionStatus: 302 },
      }),
    "ERR_SVC_VERSIONING_CUSTOM_UNKNOWN_VERSION_STATUS",
    /got 302/,
    () =>
      versioning({
        versions,
        defaultVersion: 1,
        custom: { extract: () => "1", vary: [], unknownVersionStatus: 404 },
      }),
  ],
  [
    "versions: strategies",
    () => versioning({ versions, defaultVersion: 1, uri: false, header: false }),
    "ERR_SVC_VERSIONING_STRATEGIES",
    /versions: strategies must be on for one of uri, header, query, custom and mediaType at least/,
    () => versioning({ versions, defaultVersion: 1, uri: false }),
  ],
  [
    "versions: deprecated",
    () => versioning({ versions, defaultVersion: 1, deprecated: [policy] as never }),
    "ERR_SVC_VERSIONING_DEPRECATED",
    /versions: deprecated must be an object \{ <version>: \{ deprecation, sunset\?, link\?, sunsetLink\? \} \}, got \[an object\]/,
    () => versioning({ versions, defaultVersion: 1, deprecated: { 1: policy } }),
  ],
  [
    "versions: deprecated (unsupported version)",
    () => versioning({ versions, defaultVersion: 1, deprecated: { 3: policy } }),
    "ERR_SVC_VERSIONING_DEPRECATED",
    /versions: a deprecated version must be one of the supported versions \(1, 2\), got "3"/,
    () => versioning({ versions, defaultVersion: 1, deprecated: { 2: policy } }),
  ],
  [
    "versions: deprecated (unknown name)",
    () =>
      versioning({
        versions,
        defaultVersion: 1,
        deprecated: { 1: { ...policy, sunet: "2027-01-01" } as never },
      }),
    "ERR_SVC_VERSIONING_UNKNOWN_OPTION",
    /unknown option "deprecated.sunet" \(did you mean "deprecated.sunset"\?\)/,
    () => versioning({ versions, defaultVersion: 1, deprecated: { 1: { ...policy, sunset: "2027-01-01" } } }),
  ],
  [
    "versions: deprecated.deprecation",
    () => versioning({ versions, defaultVersion: 1, deprecated: { 1: { deprecation: "soon" } } }),
    "ERR_SVC_VERSIONING_DEPRECATED_DEPRECATION",
    /versions: deprecated.1: deprecation must be a valid Date or ISO 8601 string \(2026-01-01, or a date-time with Z or an offset\), got "soon"/,
    () => versioning({ versions, defaultVersion: 1, deprecated: { 1: { deprecation: new Date(0) } } }),
  ],
  [
    "versions: deprecated.sunset",
    () =>
      versioning({
        versions,
        defaultVersion: 1,
        deprecated: { 1: { ...policy, sunset: "2025-01-01T00:00:00Z" } },
      }),
    "ERR_SVC_VERSIONING_DEPRECATED_SUNSET",
    /sunset must be no earlier than deprecation \(2026-01-01T00:00:00.000Z\), got "2025-01-01T00:00:00.000Z"/,
    () =>
      versioning({
        versions,
        defaultVersion: 1,
        deprecated: { 1: { ...policy, sunset: "2026-07-01T00:00:00Z" } },
      }),
  ],
  [
    "versions: deprecated.link",
    () => versioning({ versions, defaultVersion: 1, deprecated: { 1: { ...policy, link: "<x>" } } }),
    "ERR_SVC_VERSIONING_DEPRECATED_LINK",
    /link must be a URI, got "<x>"/,
    () =>
      versioning({
        versions,
        defaultVersion: 1,
        deprecated: { 1: { ...policy, link: "https://docs.example/v1" } },
      }),
  ],
  [
    // RFC 3986 §2: a URI is ASCII; U+2013 made Node refuse the Link header (every v1 request a 500).
    "versions: deprecated.link (not ASCII)",
    () =>
      versioning({
        versions,
        defaultVersion: 1,
        deprecated: { 1: { ...policy, link: "https://docs.example/v1–deprecation" } },
      }),
    "ERR_SVC_VERSIONING_DEPRECATED_LINK",
    /link must be a URI, got "https:\/\/docs.example\/v1–deprecation"/,
    () =>
      versioning({
        versions,
        defaultVersion: 1,
        deprecated: { 1: { ...policy, link: "https://docs.example/v1%E2%80%93deprecation" } },
      }),
  ],
  [
    "versions: deprecated.sunsetLink (a control character)",
    () =>
      versioning({
        versions,
        defaultVersion: 1,
        deprecated: { 1: { ...policy, sunsetLink: "https://docs.example/\u0000" } },
      }),
    "ERR_SVC_VERSIONING_DEPRECATED_SUNSET_LINK",
    /sunsetLink must be a URI/,
    () =>
      versioning({
        versions,
        defaultVersion: 1,
        deprecated: { 1: { ...policy, sunsetLink: "https://docs.example/%00" } },
      }),
  ],
  [
    "versions: deprecated.sunsetLink",
    () => versioning({ versions, defaultVersion: 1, deprecated: { 1: { ...policy, sunsetLink: "a b" } } }),
    "ERR_SVC_VERSIONING_DEPRECATED_SUNSET_LINK",
    /sunsetLink must be a URI, got "a b"/,
    () =>
      versioning({ versions, defaultVersion: 1, deprecated: { 1: { ...policy, sunsetLink: "/sunset" } } }),
  ],
  [
    "versions: neutral (a string)",
    () => versioning({ versions, defaultVersion: 1, neutral: "/health" as never }),
    "ERR_SVC_VERSIONING_NEUTRAL",
    /versions: neutral must be a list of paths starting with "\/" or RegExps, got "\/health"/,
    () => versioning({ versions, defaultVersion: 1, neutral: ["/health", /^\/metrics/] }),
  ],
  [
    "versions: neutral (a relative path)",
    () => versioning({ versions, defaultVersion: 1, neutral: ["health"] }),
    "ERR_SVC_VERSIONING_NEUTRAL",
    /versions: each neutral path must be .*, got "health"/,
    () => versioning({ versions, defaultVersion: 1, neutral: [] }),
  ],
  [
    "versions: same options (a second step)",
    () => versioning({ versions, defaultVersion: 1, neutral: "/health" as never }),
    "ERR_SVC_VERSIONING_NEUTRAL",
    /got "\/health"/,
    () => versioning({ versions, defaultVersion: 1 }),
  ],
  [
    "versionResolver: same options",
    () => versionResolver({ versions, defaultVersion: 1, header: { name: "X" } as never }),
    "ERR_SVC_VERSIONING_UNKNOWN_OPTION",
    /unknown option "header.name" \(did you mean "header.names"\?\)/,
    () => versionResolver({ versions, defaultVersion: 1 }),
  ],
  [
    "deprecationHeaders: policy",
    () => deprecationHeaders("2026-01-01" as never, "version 1"),
    "ERR_SVC_VERSIONING_DEPRECATED",
    /version 1 must be a deprecation policy object .*, got "2026-01-01"/,
    () => deprecationHeaders(policy, "version 1"),
  ],
  [
    "versioned: handlers",
    () => versioned(handler as never),
    "ERR_SVC_VERSIONING_HANDLERS",
    /versioned: handlers must be an object of handler functions by version .*, got a function/,
    () => versioned({ 1: handler }),
  ],
  [
    "versioned: handlers (a key)",
    () => versioned({ v1: handler } as never),
    "ERR_SVC_VERSIONING_HANDLERS",
    /versioned: a key of handlers must be a version \(1 to 999999999, major\.minor such as 1\.2, or an ISO 8601 date such as 2026-11-25\) or default, got "v1"/,
    () => versioned({ default: handler }),
  ],
  [
    "versioned: handlers (a handler)",
    () => versioned({ 1: "getV1" } as never),
    "ERR_SVC_VERSIONING_HANDLERS",
    /versioned: the handler of version 1 must be a function, got "getV1"/,
    () => versioned({ 1: handler, 2: handler }),
  ],
  [
    "versioned(handlers, options)",
    () => versioned({ 1: handler }, "inherit" as never),
    "ERR_SVC_VERSIONING_OPTIONS",
    /versioned: options must be an object with the fields inherit, got "inherit"/,
    () => versioned({ 1: handler }, {}),
  ],
  [
    "versioned: unknown name",
    () => versioned({ 1: handler }, { inherits: true } as never),
    "ERR_SVC_VERSIONING_UNKNOWN_OPTION",
    /versioned: unknown option "inherits" \(did you mean "inherit"\?\)/,
    () => versioned({ 1: handler }, { inherit: true }),
  ],
  [
    "versioned: inherit",
    () => versioned({ 1: handler }, { inherit: 1 as never }),
    "ERR_SVC_VERSIONING_INHERIT",
    /versioned: inherit must be true or false, got 1/,
    () => versioned({ 1: handler }, { inherit: false }),
  ],
];

describeOptions("@svc/versioning: every option refused at construction with a stable code", rows);
