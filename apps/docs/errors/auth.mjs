import { option } from "./helpers.mjs";

const SECRET = '"an HS256 secret of at least 32 bytes!"';
const BEARER =
  "`createBearerVerifier()` of `@svc/auth` (and `authenticate({ bearer })` of every entry, which takes the same options)";
const bearerImports = 'import { createBearerVerifier } from "@svc/auth";';
/** An option of `createBearerVerifier()`, next to an HS256 secret (or `base`). */
const br = ({
  name,
  base = `algorithms: ["HS256"], secret: ${SECRET}, `,
  imports = bearerImports,
  ...rest
}) =>
  option({
    raiser: BEARER,
    name: rest.label ?? `bearer.${name}`,
    imports,
    call: (v) => `export const verifier = createBearerVerifier({ ${base}${name}: ${v} });`,
    ...rest,
  });
const JWKS_BASE = 'algorithms: ["ES256"], jwksUri: "https://issuer.example.com/.well-known/jwks.json", ';
const DISCOVERY_BASE = 'algorithms: ["ES256"], issuerBaseURL: "https://issuer.example.com", ';
const jwksOption = (key, wrong, right, accepted) =>
  br({
    name: "jwksOptions",
    label: `bearer.jwksOptions.${key}`,
    base: JWKS_BASE,
    accepted,
    wrong: `{ ${key}: ${wrong} }`,
    right: `{ ${key}: ${right} }`,
    refused: `\`bearer.jwksOptions.${key}\`, a setting of the JWKS download, is not what it takes`,
    fix: `Give \`bearer.jwksOptions.${key}\` ${accepted}.`,
  });
const discoveryOption = (key, wrong, right, accepted) =>
  br({
    name: "discovery",
    label: `bearer.discovery.${key}`,
    base: DISCOVERY_BASE,
    accepted,
    wrong: `{ ${key}: ${wrong} }`,
    right: `{ ${key}: ${right} }`,
    refused: `\`bearer.discovery.${key}\`, a setting of the issuer's metadata download, is not what it takes`,
    fix: `Give \`bearer.discovery.${key}\` ${accepted}.`,
  });

const AUTHENTICATE =
  "`authenticate()` of `@svc/auth/express` (the same options in `./fastify`, `./node`, `./fetch` and `authenticateGate()`)";
const authImports = 'import { authenticate } from "@svc/auth/express";';
const verifyUser =
  'async (username: string, password: string) => (username === "ada" && password === "s3cret" ? { id: username } : undefined)';
const au = ({ name, base = 'realm: "api", ', imports = authImports, ...rest }) =>
  option({
    raiser: AUTHENTICATE,
    name,
    imports,
    call: (v) => `export const auth = authenticate({ ${base}${name}: ${v} });`,
    ...rest,
  });
const BASIC = "`createBasicVerifier()` of `@svc/auth` (and `authenticate({ basic })` of every entry)";
const basicImports = `import { createBasicVerifier } from "@svc/auth";\nimport { createRateLimiter } from "@svc/ratelimit";\n\nconst verify = ${verifyUser};`;
const bv = ({ name, label, ...rest }) =>
  option({
    raiser: BASIC,
    name: label ?? `basic.${name}`,
    imports: basicImports,
    call: (v) => `export const verifier = createBasicVerifier({ verify, ${name}: ${v} });`,
    ...rest,
  });
const failure = (key, wrong, right, accepted) =>
  bv({
    name: "failureLimit",
    label: `basic.failureLimit.${key}`,
    accepted,
    wrong: `{ ${key}: ${wrong} }`,
    right: `{ ${key}: ${right} }`,
    refused: `\`basic.failureLimit.${key}\`, a setting of the failed-attempt budget, is not what it takes`,
    fix: `Give \`basic.failureLimit.${key}\` ${accepted}.`,
  });
const ISSUER = "`createTokenIssuer()` of `@svc/auth`";
const issuerImports =
  'import { generateKeyPairSync } from "node:crypto";\nimport { createTokenIssuer } from "@svc/auth";\n\nconst { privateKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });';
const ti = ({ name, base = 'privateKey, issuer: "https://auth.example.com", audience: "api", ', ...rest }) =>
  option({
    raiser: ISSUER,
    name: `tokenIssuer.${name}`,
    imports: issuerImports,
    call: (v) => `export const issuer = createTokenIssuer({ ${base}${name}: ${v} });`,
    ...rest,
  });
const DPOP = "`authenticate({ dpop })` of `@svc/auth/express` (and of `./fastify`, `./node`, `./fetch`)";
const dp = ({ name, ...rest }) =>
  option({
    raiser: DPOP,
    name: `dpop.${name}`,
    imports: authImports,
    call: (v) =>
      `export const auth = authenticate({ realm: "api", bearer: { algorithms: ["ES256"], jwksUri: "https://issuer.example.com/jwks.json" }, dpop: { ${name}: ${v} } });`,
    ...rest,
  });
const SOAP =
  "`createSoapCredentialsVerifier()` of `@svc/auth` (WS-Security UsernameToken for `@svc/soap-envelope`)";
const soapImports =
  'import { createSoapCredentialsVerifier } from "@svc/auth";\n\nconst getPassword = async (username: string) => (username === "ada" ? "s3cret" : undefined);';
const sc = ({ name, base = "getPassword, ", imports = soapImports, ...rest }) =>
  option({
    raiser: SOAP,
    name: `soap.${name}`,
    imports,
    call: (v) => `export const verifier = createSoapCredentialsVerifier({ ${base}${name}: ${v} });`,
    ...rest,
  });
const HASH = "`createPasswordHasher()` and `hashPassword()` of `@svc/auth`";
const ph = ({ name, ...rest }) =>
  option({
    raiser: HASH,
    name,
    imports: 'import { createPasswordHasher } from "@svc/auth";',
    call: (v) => `export const hasher = createPasswordHasher({ ${name}: ${v} });`,
    ...rest,
  });

export default {
  // authenticate()
  ERR_SVC_AUTH_OPTIONS: {
    raiser: AUTHENTICATE,
    when: "construction",
    refused: "its options are not an object, or enable no scheme: every request would be refused",
    accepted: "an object with bearer, basic or both (enable at least one scheme)",
    fix: "Enable one scheme at least: `bearer`, `basic` or both.",
    wrong: `${authImports}\n\nexport const auth = authenticate({ realm: "api" });\n`,
    right: `${authImports}\n\nexport const auth = authenticate({ realm: "api", bearer: { algorithms: ["HS256"], secret: ${SECRET} } });\n`,
  },
  ERR_SVC_AUTH_UNKNOWN_OPTION: {
    raiser: AUTHENTICATE,
    when: "construction",
    refused:
      "its options name one it does not know, a misspelling the compiler does not catch when the object is not a literal; the message names the nearest it knows",
    accepted: 'did you mean "optional"?',
    fix: "Spell the option as the message suggests.",
    wrong: `${authImports}\n\nconst options = { realm: "api", bearer: { algorithms: ["HS256"], secret: ${SECRET} }, optinal: true };\nexport const auth = authenticate(options);\n`,
    right: `${authImports}\n\nconst options = { realm: "api", bearer: { algorithms: ["HS256"], secret: ${SECRET} }, optional: true };\nexport const auth = authenticate(options);\n`,
  },
  ERR_SVC_AUTH_REALM: au({
    name: "realm",
    base: `bearer: { algorithms: ["HS256"], secret: ${SECRET} }, `,
    accepted: "a non-empty string of printable ASCII or Latin-1 characters",
    wrong: '""',
    right: '"api"',
    fix: "Give `realm` the name of the protection space, printable text: it goes into every `WWW-Authenticate` challenge (RFC 9110 §11.5).",
  }),
  ERR_SVC_AUTH_OPTIONAL: au({
    name: "optional",
    base: `realm: "api", bearer: { algorithms: ["HS256"], secret: ${SECRET} }, `,
    accepted: "true or false",
    wrong: "JSON.parse('\"true\"')",
    right: "true",
  }),
  ERR_SVC_AUTH_REQUEST_PROPERTY: option({
    raiser: "`authenticate()` of `@svc/auth/express` and `auth` of `@svc/auth/fastify` (its registration)",
    name: "requestProperty",
    accepted: "true or false",
    imports: authImports,
    call: (v) =>
      `// The handlers written against 0.1 still read req.principal.\nexport const auth = authenticate({ realm: "api", bearer: { algorithms: ["HS256"], secret: ${SECRET} }, requestProperty: ${v} });`,
    wrong: "JSON.parse('\"true\"')",
    right: "true",
    fix: "Give `requestProperty` `true` (also set `req.principal`, for handlers written against 0.1 and 0.2) or `false`, the default; handlers read the principal with `requestState(req).principal` of `@svc/kernel`.",
  }),
  ERR_SVC_AUTH_DPOP: au({
    name: "dpop",
    accepted: "dpop needs bearer",
    refused: "`dpop` was given without `bearer`, whose options verify the DPoP-bound access tokens",
    wrong: "{ required: true }",
    right:
      '{ required: true }, bearer: { algorithms: ["ES256"], jwksUri: "https://issuer.example.com/jwks.json" }',
    fix: "Give `dpop` with `bearer`: the proof binds the access token `bearer` verifies (RFC 9449 §7.1).",
  }),
  ERR_SVC_AUTH_BASIC: au({
    name: "basic",
    accepted: "basic options or a verifier from createBasicVerifier()",
    wrong: 'JSON.parse("true")',
    right: `{ verify: ${verifyUser} }`,
    fix: "Give `basic` its options (`{ verify }`) or a verifier from `createBasicVerifier()`.",
  }),
  ERR_SVC_AUTH_BEARER: au({
    name: "bearer",
    accepted: "give exactly one of jwksUri, issuerBaseURL, jwks, key, secret",
    wrong: '{ algorithms: ["ES256"] }',
    right: '{ algorithms: ["ES256"], jwksUri: "https://issuer.example.com/.well-known/jwks.json" }',
    refused:
      "`bearer` is not an object, or gives no key source (or more than one): the tokens could not be verified",
    fix: "Give `bearer` exactly one key source: `jwksUri`, `issuerBaseURL`, `jwks`, `key` or `secret`.",
  }),
  ERR_SVC_AUTH_HOOK: option({
    raiser: "`auth` of `@svc/auth/fastify`",
    when: "registration",
    name: "hook",
    accepted: '"onRequest" or "preHandler"',
    imports: `import Fastify from "fastify";\nimport { auth } from "@svc/auth/fastify";\n\nconst app = Fastify();`,
    call: (v) =>
      `await app.register(auth, { realm: "api", bearer: { algorithms: ["HS256"], secret: ${SECRET} }, hook: ${v} });\nawait app.ready();\nawait app.close();`,
    wrong: "JSON.parse('\"onSend\"')",
    right: '"preHandler"',
    fix: 'Give `hook` `"onRequest"` (the default: before the body is read) or `"preHandler"` (after it, for a principal that depends on it).',
  }),
  ERR_SVC_AUTH_CLIENT: option({
    raiser:
      "`verify()` of a `createSoapCredentialsVerifier()` verifier, and `verifySoapCredentials()` of `@svc/auth` (the promise rejects)",
    when: "call",
    name: "client",
    accepted: "an object with the fields",
    imports: `import { createSoapCredentialsVerifier, SoapAuthError } from "@svc/auth";\n\nconst verifier = createSoapCredentialsVerifier({ getPassword: async () => "s3cret" });`,
    call: (v) =>
      `// A message without a UsernameToken is refused with SoapAuthError, as it should be.\nexport const principal = await verifier.verify([], ${v}).catch((err: unknown) => {\n  if (err instanceof SoapAuthError) return undefined;\n  throw err;\n});`,
    wrong: '"203.0.113.7" as never',
    right: '{ address: "203.0.113.7" }',
    fix: "Give the client as `{ address?, request? }`: its address keys the failure budget.",
  }),
  // createBearerVerifier()
  ERR_SVC_AUTH_BEARER_ALGORITHMS: br({
    name: "algorithms",
    base: `secret: ${SECRET}, `,
    accepted: 'a non-empty list of JWS algorithms, e.g. ["ES256"] ("none" never)',
    wrong: "JSON.parse('[\"none\"]')",
    right: '["HS256"]',
    fix: 'List the algorithms your issuer signs with (`["ES256"]`; HS* only with `secret`); `"none"` is never accepted.',
  }),
  ERR_SVC_AUTH_BEARER_SECRET: br({
    name: "secret",
    base: 'algorithms: ["HS256"], ',
    accepted: "of at least 32 bytes",
    wrong: '"changeme"',
    right: SECRET,
    fix: "Give an HMAC secret at least as long as the hash's output: 32 bytes for HS256 (RFC 7518 §3.2), from a secret store.",
  }),
  ERR_SVC_AUTH_BEARER_KEY: br({
    name: "key",
    base: 'algorithms: ["ES256"], ',
    accepted: "bearer.key must be",
    imports: `${bearerImports}\nimport { createSecretKey, generateKeyPairSync } from "node:crypto";\n\nconst { publicKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });\nconst sharedSecret = createSecretKey(Buffer.from(${SECRET}));`,
    wrong: "sharedSecret",
    right: "publicKey",
    fix: "Give the issuer's public key (a `KeyObject`, PEM text or a JWK), never a private key or a secret.",
  }),
  ERR_SVC_AUTH_BEARER_JWKS: br({
    name: "jwks",
    base: 'algorithms: ["ES256"], ',
    accepted: "a JWKS: { keys: [...] }",
    wrong: 'JSON.parse(\'[{ "kty": "EC" }]\')',
    right:
      '{ keys: [{ kty: "EC", crv: "P-256", x: "f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU", y: "x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0", alg: "ES256", use: "sig" }] }',
    fix: "Give the key set as a JWKS, `{ keys: [...] }`, not the bare list.",
  }),
  ERR_SVC_AUTH_BEARER_JWKS_URI: br({
    name: "jwksUri",
    base: 'algorithms: ["ES256"], ',
    accepted: "an absolute https: URL (http: only with bearer.allowHttp)",
    wrong: '"http://issuer.example.com/.well-known/jwks.json"',
    right: '"https://issuer.example.com/.well-known/jwks.json"',
    fix: "Give the key set's `https:` URL; `http:` is for a local issuer only, with `allowHttp: true`.",
  }),
  ERR_SVC_AUTH_BEARER_ISSUER_BASE_URL: br({
    name: "issuerBaseURL",
    base: 'algorithms: ["ES256"], ',
    accepted: "an issuer identifier: an absolute https: URL without query, fragment or user info",
    wrong: '"https://issuer.example.com/?tenant=7"',
    right: '"https://issuer.example.com"',
    fix: "Give the issuer identifier exactly (RFC 8414 §2): an `https:` URL without query or fragment; its metadata is read from `/.well-known/`.",
  }),
  ERR_SVC_AUTH_BEARER_ALLOW_HTTP: br({
    name: "allowHttp",
    base: JWKS_BASE,
    accepted: "true or false",
    wrong: "JSON.parse('\"true\"')",
    right: "false",
  }),
  ERR_SVC_AUTH_BEARER_ISSUER: br({
    name: "issuer",
    accepted: "a non-empty string or a non-empty list of them",
    wrong: "[]",
    right: '"https://issuer.example.com/"',
    fix: "Give the `iss` your tokens carry, or a list of them.",
  }),
  ERR_SVC_AUTH_BEARER_AUDIENCE: br({
    name: "audience",
    accepted: "a non-empty string or a non-empty list of them",
    wrong: '""',
    right: '"https://api.example.com"',
    fix: "Give the `aud` your tokens are issued for, or a list of them.",
  }),
  ERR_SVC_AUTH_BEARER_ISSUERS: br({
    name: "issuers",
    base: 'algorithms: ["ES256"], ',
    accepted: "bearer.issuers names",
    wrong:
      '[{ issuer: "https://a.example.com/", jwksUri: "https://a.example.com/jwks.json" }, { issuer: "https://a.example.com/", jwksUri: "https://b.example.com/jwks.json" }]',
    right:
      '[{ issuer: "https://a.example.com/", jwksUri: "https://a.example.com/jwks.json" }, { issuer: "https://b.example.com/", jwksUri: "https://b.example.com/jwks.json" }]',
    refused:
      "`bearer.issuers` is not a list of issuers each with one key source, names an issuer twice, or was given with `issuer` or a key source of its own",
    fix: "List each trusted issuer once, each with its `issuer` and one key source (`jwksUri`, `jwks` or `key`), and give no key source beside the list.",
  }),
  ERR_SVC_AUTH_BEARER_ISSUERS_AUDIENCE: br({
    name: "issuers",
    base: 'algorithms: ["ES256"], ',
    accepted: "a non-empty string or a non-empty list of them",
    wrong: '[{ issuer: "https://a.example.com/", jwksUri: "https://a.example.com/jwks.json", audience: [] }]',
    right:
      '[{ issuer: "https://a.example.com/", jwksUri: "https://a.example.com/jwks.json", audience: "api" }]',
    refused: "an issuer's `audience` in `bearer.issuers` is not a non-empty string or list",
    fix: "Give each issuer's `audience` a non-empty string or list, or leave it out to use `bearer.audience`.",
  }),
  ERR_SVC_AUTH_BEARER_DISCOVERY: {
    raiser: BEARER,
    when: "construction",
    refused:
      "`bearer.discovery` (how the issuer's metadata is read) was given without `issuerBaseURL`, so no metadata is read",
    accepted: "given only with bearer.issuerBaseURL",
    fix: "Give `discovery` with `issuerBaseURL` only; the settings of a `jwksUri` download are `jwksOptions`.",
    wrong: `${bearerImports}\n\nexport const verifier = createBearerVerifier({ ${JWKS_BASE}discovery: { timeoutDuration: 5_000 } });\n`,
    right: `${bearerImports}\n\nexport const verifier = createBearerVerifier({ ${JWKS_BASE}jwksOptions: { timeoutDuration: 5_000 } });\n`,
  },
  ERR_SVC_AUTH_BEARER_DISCOVERY_TIMEOUT_DURATION: discoveryOption(
    "timeoutDuration",
    "0",
    "5_000",
    "a whole number of milliseconds from 1 to 2147483647",
  ),
  ERR_SVC_AUTH_BEARER_DISCOVERY_MAX_BYTES: discoveryOption("maxBytes", "0", "65_536", "a positive integer"),
  ERR_SVC_AUTH_BEARER_DISCOVERY_CACHE_MAX_AGE: discoveryOption(
    "cacheMaxAge",
    "-1",
    "600_000",
    "a non-negative number of milliseconds",
  ),
  ERR_SVC_AUTH_BEARER_DISCOVERY_COOLDOWN_DURATION: discoveryOption(
    "cooldownDuration",
    "-1",
    "30_000",
    "a non-negative number of milliseconds",
  ),
  ERR_SVC_AUTH_BEARER_DISCOVERY_FETCH: discoveryOption(
    "fetch",
    "JSON.parse('\"undici\"')",
    "globalThis.fetch",
    "a fetch-like function (url, init) => Promise<Response>",
  ),
  ERR_SVC_AUTH_BEARER_JWKS_OPTIONS: br({
    name: "jwksOptions",
    base: JWKS_BASE,
    accepted:
      "an object { cacheMaxAge?, cooldownDuration?, timeoutDuration?, failureCooldownDuration?, maxBytes? }",
    wrong: 'JSON.parse("5000")',
    right: "{ timeoutDuration: 5_000 }",
  }),
  ERR_SVC_AUTH_BEARER_JWKS_OPTIONS_CACHE_MAX_AGE: jwksOption(
    "cacheMaxAge",
    "-1",
    "600_000",
    "a non-negative number of milliseconds",
  ),
  ERR_SVC_AUTH_BEARER_JWKS_OPTIONS_COOLDOWN_DURATION: jwksOption(
    "cooldownDuration",
    "-1",
    "30_000",
    "a non-negative number of milliseconds",
  ),
  ERR_SVC_AUTH_BEARER_JWKS_OPTIONS_FAILURE_COOLDOWN_DURATION: jwksOption(
    "failureCooldownDuration",
    "0",
    "5_000",
    "a number of milliseconds above 0 and at most 2147483647",
  ),
  ERR_SVC_AUTH_BEARER_JWKS_OPTIONS_MAX_BYTES: jwksOption("maxBytes", "0", "65_536", "a positive integer"),
  ERR_SVC_AUTH_BEARER_JWKS_OPTIONS_TIMEOUT_DURATION: jwksOption(
    "timeoutDuration",
    "0",
    "5_000",
    "a whole number of milliseconds from 1 to 2147483647",
  ),
  ERR_SVC_AUTH_BEARER_CLOCK_TOLERANCE: br({
    name: "clockTolerance",
    accepted: "a non-negative number of seconds",
    wrong: "-5",
    right: "5",
  }),
  ERR_SVC_AUTH_BEARER_MAX_TOKEN_AGE: br({
    name: "maxTokenAge",
    accepted: "bearer.maxTokenAge must be",
    wrong: '"an hour"',
    right: '"1h"',
    fix: 'Give `maxTokenAge` seconds, or a duration as `"1h"`, `"30m"`.',
  }),
  ERR_SVC_AUTH_BEARER_REQUIRED_CLAIMS: br({
    name: "requiredClaims",
    accepted: "a non-empty string or a list of them",
    wrong: '[""]',
    right: '["sub"]',
    fix: "List the claims every token must carry.",
  }),
  ERR_SVC_AUTH_BEARER_TYP: br({
    name: "typ",
    accepted: 'a media type without parameters, e.g. "at+jwt" or "application/at+jwt" (RFC 9068 §4)',
    wrong: '"JWT; charset=utf-8"',
    right: '"at+jwt"',
  }),
  ERR_SVC_AUTH_BEARER_ACCEPT_BOUND_TOKENS: br({
    name: "acceptBoundTokens",
    accepted: "true or false",
    wrong: "JSON.parse('\"yes\"')",
    right: "false",
  }),
  ERR_SVC_AUTH_BEARER_MAX_TOKEN_LENGTH: br({
    name: "maxTokenLength",
    accepted: "a positive integer",
    wrong: "0",
    right: "8192",
  }),
  ERR_SVC_AUTH_BEARER_CACHE: br({
    name: "cache",
    accepted: "an object { max?, maxTtl? } or false",
    wrong: 'JSON.parse("true")',
    right: "{ max: 10_000 }",
  }),
  ERR_SVC_AUTH_BEARER_CACHE_MAX: br({
    name: "cache",
    accepted: "a positive integer",
    wrong: "{ max: 0 }",
    right: "{ max: 10_000 }",
    refused: "`bearer.cache.max`, how many verified tokens are kept, is not a positive integer",
    fix: "Give `bearer.cache.max` a positive integer, or `cache: false`.",
  }),
  ERR_SVC_AUTH_BEARER_CACHE_MAX_TTL: br({
    name: "cache",
    accepted: "a positive number of seconds",
    wrong: "{ maxTtl: 0 }",
    right: "{ maxTtl: 300 }",
    refused:
      "`bearer.cache.maxTtl`, the longest a verified token is kept, is not a positive number of seconds",
    fix: "Give `bearer.cache.maxTtl` a positive number of seconds, or `cache: false`.",
  }),
  ERR_SVC_AUTH_BEARER_PRINCIPAL: br({
    name: "principal",
    accepted: "a function (claims) => { id, roles?, scopes? }",
    wrong: "JSON.parse('\"sub\"')",
    right: "(claims) => ({ id: String(claims.sub) })",
  }),
  ERR_SVC_AUTH_BEARER_VERIFY_PRINCIPAL: br({
    name: "verifyPrincipal",
    accepted: "a function (principal, claims) => boolean | Promise<boolean>",
    wrong: 'JSON.parse("true")',
    right: '(principal) => principal.id !== ""',
  }),
  ERR_SVC_AUTH_BEARER_ON_WARNING: br({
    name: "onWarning",
    accepted: "a function (message, code) => void",
    wrong: "console as never",
    right: "(warning) => console.warn(warning)",
  }),
  ERR_SVC_AUTH_BEARER_NOW: br({
    name: "now",
    accepted: "a function () => milliseconds",
    wrong: "Date.now() as never",
    right: "Date.now",
  }),
  // createBasicVerifier()
  ERR_SVC_AUTH_BASIC_VERIFY: option({
    raiser: BASIC,
    name: "basic.verify",
    accepted: "a function (username, password) => principal",
    imports:
      'import { createBasicVerifier } from "@svc/auth";\n\nconst users = new Map([["ada", "s3cret"]]);',
    call: (v) => `export const verifier = createBasicVerifier({ verify: ${v} });`,
    wrong: "users as never",
    right: "async (username, password) => (users.get(username) === password ? { id: username } : undefined)",
    fix: "Give `verify` a function of the username and password answering the principal, or `undefined` for wrong credentials.",
  }),
  ERR_SVC_AUTH_BASIC_CONCURRENCY: bv({
    name: "concurrency",
    accepted: "a positive integer",
    wrong: "0",
    right: "2",
  }),
  ERR_SVC_AUTH_BASIC_QUEUE: bv({
    name: "queue",
    accepted: "a non-negative integer",
    wrong: "-1",
    right: "16",
  }),
  ERR_SVC_AUTH_BASIC_BUSY_RETRY_AFTER: bv({
    name: "busyRetryAfter",
    accepted: "a non-negative number of seconds",
    wrong: "-1",
    right: "1",
  }),
  ERR_SVC_AUTH_BASIC_CACHE: bv({
    name: "cache",
    accepted: "an object { max, ttl } or false",
    wrong: 'JSON.parse("true")',
    right: "{ max: 1000, ttl: 60 }",
  }),
  ERR_SVC_AUTH_BASIC_CACHE_MAX: bv({
    name: "cache",
    label: "basic.cache.max",
    accepted: "a positive integer",
    wrong: "{ max: 0, ttl: 60 }",
    right: "{ max: 1000, ttl: 60 }",
    refused: "`basic.cache.max`, how many verified credentials are kept, is not a positive integer",
    fix: "Give `basic.cache.max` a positive integer, or `cache: false`.",
  }),
  ERR_SVC_AUTH_BASIC_CACHE_TTL: bv({
    name: "cache",
    label: "basic.cache.ttl",
    accepted: "a positive number of seconds",
    wrong: "{ max: 1000, ttl: 0 }",
    right: "{ max: 1000, ttl: 60 }",
    refused: "`basic.cache.ttl`, how long verified credentials are kept, is not a positive number of seconds",
    fix: "Give `basic.cache.ttl` a positive number of seconds, or `cache: false`.",
  }),
  ERR_SVC_AUTH_BASIC_FAILURE_LIMIT: bv({
    name: "failureLimit",
    accepted: "an object { perClient?, perUsername?, ... } or false",
    wrong: 'JSON.parse("5")',
    right: "false",
  }),
  ERR_SVC_AUTH_BASIC_FAILURE_LIMIT_PER_CLIENT: failure(
    "perClient",
    'JSON.parse("5")',
    'createRateLimiter({ limit: 5, windowMs: 60_000, prefix: "auth-client:" })',
    "a limiter with consume(key, cost)",
  ),
  ERR_SVC_AUTH_BASIC_FAILURE_LIMIT_PER_USERNAME: failure(
    "perUsername",
    'JSON.parse("5")',
    'createRateLimiter({ limit: 5, windowMs: 60_000, prefix: "auth-user:" })',
    "a limiter with consume(key, cost)",
  ),
  ERR_SVC_AUTH_BASIC_FAILURE_LIMIT_CLIENT_ADDRESS: failure(
    "clientAddress",
    "JSON.parse('\"x-forwarded-for\"')",
    '(req) => req.socket?.remoteAddress ?? ""',
    "a function (req) => string",
  ),
  ERR_SVC_AUTH_BASIC_FAILURE_LIMIT_FAIL_MODE: failure(
    "failMode",
    "JSON.parse('\"fail-open\"')",
    '"closed"',
    '"open" or "closed"',
  ),
  ERR_SVC_AUTH_BASIC_FAILURE_LIMIT_LOGGER: failure(
    "logger",
    "console.warn as never",
    "console",
    "an object with warn(obj, msg)",
  ),
  // authorize
  ERR_SVC_AUTH_REQUIRE_SCOPES: option({
    raiser: "`requireScopes()` of `@svc/auth/express` (and of `./fastify`, `./node`, `./fetch`)",
    name: "scopes",
    accepted: "one or more names without spaces, quotes or backslashes",
    imports: 'import { requireScopes } from "@svc/auth/express";',
    call: (v) => `export const canWrite = requireScopes(${v});`,
    wrong: '"orders:read orders:write"',
    right: '"orders:read", "orders:write"',
    fix: 'Give each scope as its own argument: `requireScopes("orders:read", "orders:write")`.',
  }),
  ERR_SVC_AUTH_REQUIRE_ROLES: option({
    raiser: "`requireRoles()` of `@svc/auth/express` (and of `./fastify`, `./node`, `./fetch`)",
    name: "roles",
    accepted: "one or more names without spaces, quotes or backslashes",
    imports: 'import { requireRoles } from "@svc/auth/express";',
    call: (v) => `export const adminsOnly = requireRoles(${v});`,
    wrong: '"admin, auditor"',
    right: '"admin", "auditor"',
    fix: 'Give each role as its own argument: `requireRoles("admin", "auditor")`.',
  }),
  ERR_SVC_AUTH_AUTHORIZE_PREDICATE: option({
    raiser: "`authorize()` of `@svc/auth/express` (and of `./fastify`, `./node`, `./fetch`)",
    name: "predicate",
    accepted: "a function (principal, request) => boolean",
    imports: 'import { authorize } from "@svc/auth/express";',
    call: (v) => `export const ownerOnly = authorize(${v});`,
    wrong: "JSON.parse('\"owner\"')",
    right: '(principal) => principal.id === "ada"',
  }),
  // createTokenIssuer()
  ERR_SVC_AUTH_TOKEN_ISSUER: option({
    raiser: ISSUER,
    name: "tokenIssuer",
    accepted: "an object { issuer, audience, ... }",
    imports: issuerImports,
    call: (v) => `export const issuer = createTokenIssuer(${v});`,
    wrong: 'JSON.parse("null")',
    right: '{ privateKey, issuer: "https://auth.example.com", audience: "api" }',
    fix: "Pass an object with `privateKey`, `issuer` and `audience`.",
  }),
  ERR_SVC_AUTH_TOKEN_ISSUER_ALGORITHM: ti({
    name: "algorithm",
    accepted: "one of ",
    wrong: "JSON.parse('\"HS256\"')",
    right: '"ES256"',
    fix: "Name an asymmetric algorithm the key fits (`ES256` for a P-256 key).",
  }),
  ERR_SVC_AUTH_TOKEN_ISSUER_ISSUER: ti({
    name: "issuer",
    base: 'privateKey, audience: "api", ',
    accepted: "a non-empty string",
    wrong: '""',
    right: '"https://auth.example.com"',
  }),
  ERR_SVC_AUTH_TOKEN_ISSUER_AUDIENCE: ti({
    name: "audience",
    base: 'privateKey, issuer: "https://auth.example.com", ',
    accepted: "a non-empty string or a non-empty list of them",
    wrong: "[]",
    right: '"api"',
  }),
  ERR_SVC_AUTH_TOKEN_ISSUER_TTL: ti({
    name: "ttl",
    accepted: "a positive integer of seconds",
    wrong: "0",
    right: "900",
    fix: "Give `ttl` the tokens' lifetime, a positive whole number of seconds.",
  }),
  ERR_SVC_AUTH_TOKEN_ISSUER_KID: ti({
    name: "kid",
    accepted: "a non-empty string",
    wrong: '""',
    right: '"2026-11"',
    fix: "Give `kid` a non-empty key id, as the JWKS names the key.",
  }),
  ERR_SVC_AUTH_TOKEN_ISSUER_NOW: ti({
    name: "now",
    accepted: "a function () => milliseconds",
    wrong: "Date.now() as never",
    right: "Date.now",
  }),
  ERR_SVC_AUTH_TOKEN_ISSUER_PRIVATE_KEY: ti({
    name: "privateKey",
    base: 'issuer: "https://auth.example.com", audience: "api", ',
    imports: issuerImports,
    accepted: "a private JWK, a PKCS#8 PEM, a private KeyObject or a private CryptoKey",
    wrong: 'generateKeyPairSync("ec", { namedCurve: "P-256" }).publicKey',
    right: "privateKey",
    fix: "Give the private key the tokens are signed with (a `KeyObject` or PEM text), not the public one.",
  }),
  // discoverIssuer()
  ERR_SVC_AUTH_DISCOVER_ISSUER_ISSUER: option({
    raiser: "`discoverIssuer()` of `@svc/auth`",
    when: "call",
    name: "issuer",
    accepted: "an absolute URL string without query, fragment or user info (RFC 8414 §2)",
    imports:
      'import { discoverIssuer } from "@svc/auth";\n\nconst fetch = async () => Response.json({ issuer: "https://issuer.example.com", jwks_uri: "https://issuer.example.com/jwks.json" });',
    call: (v) => `export const metadata = await discoverIssuer(${v}, { fetch });`,
    wrong: '"issuer.example.com"',
    right: '"https://issuer.example.com"',
    fix: "Give the issuer identifier, an absolute URL without query or fragment.",
  }),
  ERR_SVC_AUTH_DISCOVER_ISSUER: option({
    raiser: "`discoverIssuer()` of `@svc/auth`",
    when: "call",
    name: "options",
    accepted: "an object { timeoutDuration?, maxBytes?, fetch?, allowHttp? }",
    imports:
      'import { discoverIssuer } from "@svc/auth";\n\nconst fetch = async () => Response.json({ issuer: "https://issuer.example.com", jwks_uri: "https://issuer.example.com/jwks.json" });',
    call: (v) => `export const metadata = await discoverIssuer("https://issuer.example.com", ${v});`,
    wrong: "fetch as never",
    right: "{ fetch }",
    fix: "Pass an object of options: `{ fetch }`.",
  }),
  ERR_SVC_AUTH_DISCOVER_ISSUER_ALLOW_HTTP: option({
    raiser: "`discoverIssuer()` of `@svc/auth`",
    when: "call",
    name: "allowHttp",
    accepted: "true or false",
    imports:
      'import { discoverIssuer } from "@svc/auth";\n\nconst fetch = async () => Response.json({ issuer: "http://127.0.0.1:8080", jwks_uri: "http://127.0.0.1:8080/jwks.json" });',
    call: (v) =>
      `export const metadata = await discoverIssuer("http://127.0.0.1:8080", { fetch, allowHttp: ${v} });`,
    wrong: "JSON.parse('\"true\"')",
    right: "true",
  }),
  ERR_SVC_AUTH_DISCOVER_ISSUER_TIMEOUT_DURATION: option({
    raiser: "`discoverIssuer()` of `@svc/auth`",
    when: "call",
    name: "timeoutDuration",
    accepted: "a whole number of milliseconds from 1 to 2147483647",
    imports:
      'import { discoverIssuer } from "@svc/auth";\n\nconst fetch = async () => Response.json({ issuer: "https://issuer.example.com", jwks_uri: "https://issuer.example.com/jwks.json" });',
    call: (v) =>
      `export const metadata = await discoverIssuer("https://issuer.example.com", { fetch, timeoutDuration: ${v} });`,
    wrong: "0",
    right: "5_000",
  }),
  ERR_SVC_AUTH_DISCOVER_ISSUER_MAX_BYTES: option({
    raiser: "`discoverIssuer()` of `@svc/auth`",
    when: "call",
    name: "maxBytes",
    accepted: "a positive integer",
    imports:
      'import { discoverIssuer } from "@svc/auth";\n\nconst fetch = async () => Response.json({ issuer: "https://issuer.example.com", jwks_uri: "https://issuer.example.com/jwks.json" });',
    call: (v) =>
      `export const metadata = await discoverIssuer("https://issuer.example.com", { fetch, maxBytes: ${v} });`,
    wrong: "0",
    right: "65_536",
  }),
  ERR_SVC_AUTH_DISCOVER_ISSUER_FETCH: option({
    raiser: "`discoverIssuer()` of `@svc/auth`",
    when: "call",
    name: "fetch",
    accepted: "a fetch-like function (url, init) => Promise<Response>",
    imports:
      'import { discoverIssuer } from "@svc/auth";\n\nconst fetch = async () => Response.json({ issuer: "https://issuer.example.com", jwks_uri: "https://issuer.example.com/jwks.json" });',
    call: (v) =>
      `export const metadata = await discoverIssuer("https://issuer.example.com", { fetch: ${v} });`,
    wrong: "JSON.parse('\"undici\"')",
    right: "fetch",
  }),
  // dpop
  ERR_SVC_AUTH_DPOP_REQUIRED: dp({
    name: "required",
    accepted: "true or false",
    wrong: "JSON.parse('\"true\"')",
    right: "true",
  }),
  ERR_SVC_AUTH_DPOP_ALGORITHMS: dp({
    name: "algorithms",
    accepted: "a non-empty list of asymmetric JWS algorithms",
    wrong: "JSON.parse('[\"HS256\"]')",
    right: '["ES256"]',
    fix: "List asymmetric JWS algorithms for the proofs (`ES256`): a proof is signed with the client's private key.",
  }),
  ERR_SVC_AUTH_DPOP_MAX_AGE: dp({
    name: "maxAge",
    accepted: "a non-negative number of seconds",
    wrong: "-1",
    right: "300",
    fix: "Give `maxAge` the seconds a proof stays acceptable after its `iat`, a positive number.",
  }),
  ERR_SVC_AUTH_DPOP_MAX_PROOF_LENGTH: dp({
    name: "maxProofLength",
    accepted: "a whole number of characters, at least 256",
    wrong: "0",
    right: "8192",
  }),
  ERR_SVC_AUTH_DPOP_NONCE_SECRET: dp({
    name: "nonce",
    accepted: "a string or Uint8Array of at least 32 bytes",
    wrong: '{ secret: "short" }',
    right: '{ secret: "a DPoP nonce secret of at least 32 bytes" }',
    refused: "`dpop.nonce.secret`, the key the server's nonces are made with, is too short or missing",
    fix: "Give `dpop.nonce.secret` at least 32 bytes from a secret store.",
  }),
  ERR_SVC_AUTH_DPOP_REPLAY_STORE: dp({
    name: "replayStore",
    accepted: "a store with claim(key, ttlMs), such as memoryNonceStore()",
    wrong: "new Map() as never",
    right: "memoryNonceStore()",
    imports:
      'import { memoryNonceStore } from "@svc/auth";\nimport { authenticate } from "@svc/auth/express";',
    fix: "Give a nonce store (`memoryNonceStore()`, `redisNonceStore({ client })`) that remembers each proof's `jti`.",
  }),
  ERR_SVC_AUTH_DPOP_TRUST_PROXY: dp({
    name: "trustProxy",
    accepted: "true, false, a hop count, addresses or CIDR ranges",
    wrong: "-1",
    right: '"loopback"',
    fix: "Give `trustProxy` what Express's `trust proxy` takes: the proof's `htu` is checked against the URL the client used.",
  }),
  ERR_SVC_AUTH_DPOP_FORWARDED_HEADERS: dp({
    name: "forwardedHeaders",
    accepted: '"x-forwarded" or "forwarded" (RFC 7239 Forwarded)',
    wrong: "JSON.parse('\"x-forwarded-host\"')",
    right: '"forwarded"',
  }),
  // nonce stores
  ERR_SVC_AUTH_MEMORY_NONCE_STORE: option({
    raiser: "`memoryNonceStore()` of `@svc/auth`",
    name: "options",
    accepted: "an object { max?, now? }",
    imports: 'import { memoryNonceStore } from "@svc/auth";',
    call: (v) => `export const store = memoryNonceStore(${v});`,
    wrong: 'JSON.parse("10000")',
    right: "{ max: 10_000 }",
    fix: "Pass an object of options: `{ max }`.",
  }),
  ERR_SVC_AUTH_MEMORY_NONCE_STORE_MAX: option({
    raiser: "`memoryNonceStore()` of `@svc/auth`",
    name: "max",
    accepted: "a positive integer",
    imports: 'import { memoryNonceStore } from "@svc/auth";',
    call: (v) => `export const store = memoryNonceStore({ max: ${v} });`,
    wrong: "0",
    right: "10_000",
  }),
  ERR_SVC_AUTH_MEMORY_NONCE_STORE_NOW: option({
    raiser: "`memoryNonceStore()` of `@svc/auth`",
    name: "now",
    accepted: "a function () => milliseconds",
    imports: 'import { memoryNonceStore } from "@svc/auth";',
    call: (v) => `export const store = memoryNonceStore({ now: ${v} });`,
    wrong: "Date.now() as never",
    right: "Date.now",
  }),
  ERR_SVC_AUTH_REDIS_NONCE_STORE_CLIENT: option({
    raiser: "`redisNonceStore()` of `@svc/auth`",
    name: "client",
    accepted: "client must be an ioredis or node-redis client (with call or sendCommand)",
    imports: 'import { Redis } from "ioredis";\nimport { redisNonceStore } from "@svc/auth";',
    call: (v) => `export const store = redisNonceStore({ client: ${v} });`,
    wrong: "process.env.REDIS_URL as never",
    right: "new Redis({ lazyConnect: true, enableOfflineQueue: false })",
    fix: "Give a Redis client (ioredis or node-redis), not its URL.",
  }),
  ERR_SVC_AUTH_REDIS_NONCE_STORE_PREFIX: option({
    raiser: "`redisNonceStore()` of `@svc/auth`",
    name: "prefix",
    accepted: "prefix must be a string",
    imports:
      'import { Redis } from "ioredis";\nimport { redisNonceStore } from "@svc/auth";\n\nconst client = new Redis({ lazyConnect: true, enableOfflineQueue: false });',
    call: (v) => `export const store = redisNonceStore({ client, prefix: ${v} });`,
    wrong: 'JSON.parse("7")',
    right: '"dpop:"',
  }),
  ERR_SVC_AUTH_REDIS_NONCE_STORE_TIMEOUT_MS: option({
    raiser: "`redisNonceStore()` of `@svc/auth`",
    name: "timeoutMs",
    accepted: "a positive number of milliseconds up to 2147483647",
    imports:
      'import { Redis } from "ioredis";\nimport { redisNonceStore } from "@svc/auth";\n\nconst client = new Redis({ lazyConnect: true, enableOfflineQueue: false });',
    call: (v) => `export const store = redisNonceStore({ client, timeoutMs: ${v} });`,
    wrong: "0",
    right: "500",
  }),
  // password hashing
  ERR_SVC_AUTH_PASSWORD_HASH: option({
    raiser: HASH,
    name: "options",
    imports: 'import { createPasswordHasher } from "@svc/auth";',
    call: (v) => `export const hasher = createPasswordHasher(${v});`,
    accepted: "an object { logN, r, p }",
    wrong: 'JSON.parse("17")',
    right: "{ logN: 17 }",
    refused: "the hashing options are not an object",
    fix: "Pass an object of scrypt parameters, or nothing for the defaults.",
  }),
  ERR_SVC_AUTH_PASSWORD_HASH_LOG_N: ph({
    name: "logN",
    accepted: "an integer from 1 to 24",
    wrong: "40",
    right: "17",
    fix: "Give `logN`, the base-2 logarithm of scrypt's cost N, an integer within the bounds the message gives.",
  }),
  ERR_SVC_AUTH_PASSWORD_HASH_R: ph({
    name: "r",
    accepted: "an integer from 1 to 999",
    wrong: "0",
    right: "8",
    fix: "Give `r`, scrypt's block size, a positive integer (8).",
  }),
  ERR_SVC_AUTH_PASSWORD_HASH_P: ph({
    name: "p",
    accepted: "an integer from 1 to 999",
    wrong: "0",
    right: "1",
    fix: "Give `p`, scrypt's parallelism, a positive integer (1).",
  }),
  // SOAP credentials
  ERR_SVC_AUTH_SOAP: option({
    raiser: SOAP,
    name: "soap",
    accepted: "an object { verify or verifier, getPassword?, ... }",
    imports: soapImports,
    call: (v) => `export const verifier = createSoapCredentialsVerifier(${v});`,
    wrong: "getPassword as never",
    right: "{ getPassword }",
    fix: "Pass an object of options with `getPassword` (or `verify`).",
  }),
  ERR_SVC_AUTH_SOAP_GET_PASSWORD: sc({
    name: "getPassword",
    base: "",
    accepted: "a function (username) => password",
    wrong: "JSON.parse('\"s3cret\"')",
    right: "getPassword",
  }),
  ERR_SVC_AUTH_SOAP_VERIFY: sc({
    name: "verify",
    base: "",
    accepted: "a function (username, password) => principal",
    wrong: 'JSON.parse("true")',
    right:
      'async (username: string, password: string) => (username === "ada" && password === "s3cret" ? { id: username } : undefined)',
  }),
  ERR_SVC_AUTH_SOAP_VERIFIER: sc({
    name: "verifier",
    imports: `${soapImports}\nimport { createBasicVerifier } from "@svc/auth";\n\nconst verify = ${verifyUser};`,
    accepted: "a verifier made by createBasicVerifier()",
    wrong: 'JSON.parse("true")',
    right: "createBasicVerifier({ verify })",
  }),
  ERR_SVC_AUTH_SOAP_MAX_AGE: sc({
    name: "maxAge",
    accepted: "a non-negative number of seconds",
    wrong: "-1",
    right: "300",
  }),
  ERR_SVC_AUTH_SOAP_CLOCK_SKEW: sc({
    name: "clockSkew",
    accepted: "a non-negative number of seconds",
    wrong: "-1",
    right: "300",
  }),
  ERR_SVC_AUTH_SOAP_NONCE_STORE: sc({
    name: "nonceStore",
    imports: `${soapImports}\nimport { memoryNonceStore } from "@svc/auth";`,
    accepted: "a store with claim(nonce, ttlMs)",
    wrong: "new Set() as never",
    right: "memoryNonceStore()",
  }),
  ERR_SVC_AUTH_SOAP_NOW: sc({
    name: "now",
    accepted: "a function () => milliseconds",
    wrong: "Date.now() as never",
    right: "Date.now",
  }),
  ERR_SVC_AUTH_SOAP_REQUIRE_NONCE_FOR_TEXT: sc({
    name: "requireNonceForText",
    accepted: "true or false",
    wrong: "JSON.parse('\"yes\"')",
    right: "true",
  }),
  ERR_SVC_AUTH_SOAP_ALLOW_AUTHENTICATION_HEADER: sc({
    name: "allowAuthenticationHeader",
    accepted: "true or false",
    wrong: "JSON.parse('\"yes\"')",
    right: "true",
  }),
  ERR_SVC_AUTH_SOAP_AUTHENTICATION_NAMESPACE: sc({
    name: "authenticationNamespace",
    accepted: "a namespace URI string or null",
    wrong: 'JSON.parse("1")',
    right: '"urn:example:auth"',
  }),
};
