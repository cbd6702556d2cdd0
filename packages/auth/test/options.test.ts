import { generateKeyPairSync } from "node:crypto";
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { authenticate, authorize, requireRoles, requireScopes } from "../src/express.js";
import {
  createBasicVerifier,
  createBearerVerifier,
  createPasswordHasher,
  createSoapCredentialsVerifier,
  createTokenIssuer,
  discoverIssuer,
  hashPassword,
  memoryNonceStore,
  redisNonceStore,
  verifyPassword,
  verifySoapCredentials,
} from "../src/index.js";

/**
 * Every option of every factory @svc/auth exports, refused at construction with its stable code.
 * The README's "Option codes" table lists the same codes (checked at the end).
 */
const { publicKey, privateKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
const jwks = { keys: [] };
const ok = { algorithms: ["ES256"], jwks };
const verify = () => null;
const bearer = (options: Record<string, unknown>) => () => createBearerVerifier(options as never);
const issuer = (options: Record<string, unknown>) => () =>
  createTokenIssuer({ issuer: "https://i.example/", audience: "a", ...options } as never);
const SECRET = "s".repeat(31);

const cases: [string, () => unknown, string][] = [
  // createBearerVerifier (and authenticate's bearer)
  ["bearer: null", bearer(null as never), "ERR_SVC_AUTH_BEARER"],
  ["bearer without a key source", bearer({ algorithms: ["ES256"] }), "ERR_SVC_AUTH_BEARER"],
  ["bearer with two key sources", bearer({ ...ok, key: publicKey }), "ERR_SVC_AUTH_BEARER"],
  ["bearer.algorithms missing", bearer({ jwks }), "ERR_SVC_AUTH_BEARER_ALGORITHMS"],
  ['bearer.algorithms ["none"]', bearer({ jwks, algorithms: ["none"] }), "ERR_SVC_AUTH_BEARER_ALGORITHMS"],
  [
    'bearer.algorithms ["ES256", "HS256"]',
    bearer({ jwks, algorithms: ["ES256", "HS256"] }),
    "ERR_SVC_AUTH_BEARER_ALGORITHMS",
  ],
  [
    'bearer.algorithms ["HS256"] with a key',
    bearer({ key: publicKey, algorithms: ["HS256"] }),
    "ERR_SVC_AUTH_BEARER_ALGORITHMS",
  ],
  [
    "bearer.secret of 31 bytes",
    bearer({ secret: SECRET, algorithms: ["HS256"] }),
    "ERR_SVC_AUTH_BEARER_SECRET",
  ],
  // RFC 7518 §3.2: "A key of the same size as the hash output ... or larger MUST be used".
  [
    "bearer.secret of 32 bytes with HS384",
    bearer({ secret: `${SECRET}s`, algorithms: ["HS384"] }),
    "ERR_SVC_AUTH_BEARER_SECRET",
  ],
  [
    "bearer.secret of 48 bytes with HS256 and HS512",
    bearer({ secret: "s".repeat(48), algorithms: ["HS256", "HS512"] }),
    "ERR_SVC_AUTH_BEARER_SECRET",
  ],
  [
    "bearer.secret with ES256",
    bearer({ secret: `${SECRET}s`, algorithms: ["ES256"] }),
    "ERR_SVC_AUTH_BEARER_SECRET",
  ],
  [
    "bearer.key a private-looking string",
    bearer({ key: "not a pem", algorithms: ["ES256"] }),
    "ERR_SVC_AUTH_BEARER_KEY",
  ],
  // RFC 7518 §3.4: ES256 is ECDSA on P-256; a P-384 key can verify no ES256 token, so every
  // request was a 401 invalid_token with nothing at startup to say why.
  [
    "bearer.key a P-384 key with ES256",
    bearer({ key: generateKeyPairSync("ec", { namedCurve: "P-384" }).publicKey, algorithms: ["ES256"] }),
    "ERR_SVC_AUTH_BEARER_KEY",
  ],
  [
    "bearer.key an RSA key with ES256 and EdDSA",
    bearer({
      key: generateKeyPairSync("rsa", { modulusLength: 2048 }).publicKey,
      algorithms: ["ES256", "EdDSA"],
    }),
    "ERR_SVC_AUTH_BEARER_KEY",
  ],
  [
    "bearer.key an oct JWK",
    bearer({ key: { kty: "oct", k: "AA" }, algorithms: ["ES256"] }),
    "ERR_SVC_AUTH_BEARER_KEY",
  ],
  ["bearer.jwks {}", bearer({ jwks: {}, algorithms: ["ES256"] }), "ERR_SVC_AUTH_BEARER_JWKS"],
  // bearer.issuers (several issuers, each with its own key source)
  ["bearer.issuers []", bearer({ algorithms: ["ES256"], issuers: [] }), "ERR_SVC_AUTH_BEARER_ISSUERS"],
  [
    "bearer.issuers with bearer.issuer",
    bearer({ algorithms: ["ES256"], issuer: "https://a/", issuers: [{ issuer: "https://a/", jwks }] }),
    "ERR_SVC_AUTH_BEARER_ISSUERS",
  ],
  [
    "bearer.issuers with a top-level key source",
    bearer({ ...ok, issuers: [{ issuer: "https://a/", jwks }] }),
    "ERR_SVC_AUTH_BEARER",
  ],
  [
    "bearer.issuers entry without issuer",
    bearer({ algorithms: ["ES256"], issuers: [{ jwks }] }),
    "ERR_SVC_AUTH_BEARER_ISSUERS",
  ],
  [
    "bearer.issuers naming one issuer twice",
    bearer({
      algorithms: ["ES256"],
      issuers: [
        { issuer: "https://a/", jwks },
        { issuer: "https://a/", jwks },
      ],
    }),
    "ERR_SVC_AUTH_BEARER_ISSUERS",
  ],
  [
    "bearer.issuers entry without a key source",
    bearer({ algorithms: ["ES256"], issuers: [{ issuer: "https://a/" }] }),
    "ERR_SVC_AUTH_BEARER_ISSUERS",
  ],
  [
    "bearer.issuers entry with two key sources",
    bearer({ algorithms: ["ES256"], issuers: [{ issuer: "https://a/", jwks, key: publicKey }] }),
    "ERR_SVC_AUTH_BEARER_ISSUERS",
  ],
  [
    "bearer.issuers with HS256",
    bearer({ algorithms: ["HS256"], issuers: [{ issuer: "https://a/", jwks }] }),
    "ERR_SVC_AUTH_BEARER_ALGORITHMS",
  ],
  [
    'bearer.issuers entry audience ""',
    bearer({ algorithms: ["ES256"], issuers: [{ issuer: "https://a/", jwks, audience: "" }] }),
    "ERR_SVC_AUTH_BEARER_ISSUERS_AUDIENCE",
  ],
  [
    "bearer.issuers entry jwksUri http:",
    bearer({ algorithms: ["ES256"], issuers: [{ issuer: "https://a/", jwksUri: "http://a/jwks" }] }),
    "ERR_SVC_AUTH_BEARER_JWKS_URI",
  ],
  [
    "bearer.jwksUri not a URL",
    bearer({ jwksUri: "jwks.json", algorithms: ["ES256"] }),
    "ERR_SVC_AUTH_BEARER_JWKS_URI",
  ],
  [
    "bearer.jwksUri http:",
    bearer({ jwksUri: "http://i.example/jwks", algorithms: ["ES256"] }),
    "ERR_SVC_AUTH_BEARER_JWKS_URI",
  ],
  [
    "bearer.issuerBaseURL http:",
    bearer({ issuerBaseURL: "http://i.example", algorithms: ["ES256"] }),
    "ERR_SVC_AUTH_BEARER_ISSUER_BASE_URL",
  ],
  [
    "bearer.issuerBaseURL ftp:",
    bearer({ issuerBaseURL: "ftp://i.example", algorithms: ["ES256"] }),
    "ERR_SVC_AUTH_BEARER_ISSUER_BASE_URL",
  ],
  // RFC 8414 §2 and OpenID Connect Core 1.0 §1.2: an issuer identifier has no query or fragment
  // (nor userinfo): its metadata URL drops them, so no conforming issuer could ever match it.
  ...[
    "https://i.example/?tenant=a",
    "https://i.example/#x",
    "https://i.example/?",
    "https://u:p@i.example/",
  ].map((issuerBaseURL): [string, () => unknown, string] => [
    `bearer.issuerBaseURL ${issuerBaseURL}`,
    bearer({ issuerBaseURL, algorithms: ["ES256"] }),
    "ERR_SVC_AUTH_BEARER_ISSUER_BASE_URL",
  ]),
  [
    "bearer.discovery without issuerBaseURL",
    bearer({ ...ok, discovery: {} }),
    "ERR_SVC_AUTH_BEARER_DISCOVERY",
  ],
  ...(
    [
      ["timeoutDuration", 0, "TIMEOUT_DURATION"],
      // AbortSignal.timeout takes whole milliseconds up to 2^31 - 1: 1.5 threw per download (503
      // on every request), 2^31 overflowed to a 1 ms timeout.
      ["timeoutDuration", 1.5, "TIMEOUT_DURATION"],
      ["timeoutDuration", 2 ** 31, "TIMEOUT_DURATION"],
      ["maxBytes", 1.5, "MAX_BYTES"],
      ["cacheMaxAge", -1, "CACHE_MAX_AGE"],
      ["cooldownDuration", Number.NaN, "COOLDOWN_DURATION"],
      ["fetch", "fetch", "FETCH"],
    ] as const
  ).map(([name, value, code]): [string, () => unknown, string] => [
    `bearer.discovery.${name} ${String(value)}`,
    bearer({ issuerBaseURL: "https://i.example/", algorithms: ["ES256"], discovery: { [name]: value } }),
    `ERR_SVC_AUTH_BEARER_DISCOVERY_${code}`,
  ]),
  ...(
    [
      ["cacheMaxAge", -1, "CACHE_MAX_AGE"],
      ["cooldownDuration", "30s", "COOLDOWN_DURATION"],
      ["timeoutDuration", Number.POSITIVE_INFINITY, "TIMEOUT_DURATION"],
      // jose aborts the JWKS download after this many ms: 0 ("no timeout"?) or 2^31 (overflowed
      // to 1 ms) made every Bearer request a 503; 1500.5 threw jose's own uncoded TypeError.
      ["timeoutDuration", 0, "TIMEOUT_DURATION"],
      ["timeoutDuration", 2 ** 31, "TIMEOUT_DURATION"],
      ["timeoutDuration", 1500.5, "TIMEOUT_DURATION"],
      ["maxBytes", 0, "MAX_BYTES"],
      ["maxBytes", 1.5, "MAX_BYTES"],
      ["maxBytes", "1mb", "MAX_BYTES"],
    ] as const
  ).map(([name, value, code]): [string, () => unknown, string] => [
    `bearer.jwksOptions.${name} ${String(value)}`,
    bearer({ jwksUri: "https://i.example/jwks", algorithms: ["ES256"], jwksOptions: { [name]: value } }),
    `ERR_SVC_AUTH_BEARER_JWKS_OPTIONS_${code}`,
  ]),
  [
    "bearer.jwksOptions 5",
    bearer({ jwksUri: "https://i.example/jwks", algorithms: ["ES256"], jwksOptions: 5 }),
    "ERR_SVC_AUTH_BEARER_JWKS_OPTIONS",
  ],
  ['bearer.allowHttp "yes"', bearer({ ...ok, allowHttp: "yes" }), "ERR_SVC_AUTH_BEARER_ALLOW_HTTP"],
  ["bearer.onWarning 1", bearer({ ...ok, onWarning: 1 }), "ERR_SVC_AUTH_BEARER_ON_WARNING"],
  ['bearer.issuer ""', bearer({ ...ok, issuer: "" }), "ERR_SVC_AUTH_BEARER_ISSUER"],
  ["bearer.issuer []", bearer({ ...ok, issuer: [] }), "ERR_SVC_AUTH_BEARER_ISSUER"],
  ["bearer.audience [1]", bearer({ ...ok, audience: [1] }), "ERR_SVC_AUTH_BEARER_AUDIENCE"],
  [
    'bearer.requiredClaims "sub"…[""]',
    bearer({ ...ok, requiredClaims: [""] }),
    "ERR_SVC_AUTH_BEARER_REQUIRED_CLAIMS",
  ],
  ["bearer.clockTolerance -1", bearer({ ...ok, clockTolerance: -1 }), "ERR_SVC_AUTH_BEARER_CLOCK_TOLERANCE"],
  ['bearer.maxTokenAge "soon"', bearer({ ...ok, maxTokenAge: "soon" }), "ERR_SVC_AUTH_BEARER_MAX_TOKEN_AGE"],
  ["bearer.maxTokenAge -5", bearer({ ...ok, maxTokenAge: -5 }), "ERR_SVC_AUTH_BEARER_MAX_TOKEN_AGE"],
  ["bearer.maxTokenLength 0", bearer({ ...ok, maxTokenLength: 0 }), "ERR_SVC_AUTH_BEARER_MAX_TOKEN_LENGTH"],
  ["bearer.cache true", bearer({ ...ok, cache: true }), "ERR_SVC_AUTH_BEARER_CACHE"],
  ["bearer.cache.max 0", bearer({ ...ok, cache: { max: 0 } }), "ERR_SVC_AUTH_BEARER_CACHE_MAX"],
  ["bearer.cache.maxTtl 0", bearer({ ...ok, cache: { maxTtl: 0 } }), "ERR_SVC_AUTH_BEARER_CACHE_MAX_TTL"],
  ['bearer.principal "sub"', bearer({ ...ok, principal: "sub" }), "ERR_SVC_AUTH_BEARER_PRINCIPAL"],
  ["bearer.now 0", bearer({ ...ok, now: 0 }), "ERR_SVC_AUTH_BEARER_NOW"],
  [
    "bearer.verifyPrincipal true",
    bearer({ ...ok, verifyPrincipal: true }),
    "ERR_SVC_AUTH_BEARER_VERIFY_PRINCIPAL",
  ],
  // RFC 9068 §4, RFC 6838 §4.2: a media type ("at+jwt", "application/at+jwt"), one of them.
  ...[
    "",
    " at+jwt",
    "at+jwt; charset=utf-8",
    "application/",
    "application/at+jwt/x",
    "+jwt",
    5,
    ["at+jwt"],
    null,
  ].map((typ): [string, () => unknown, string] => [
    `bearer.typ ${JSON.stringify(typ)}`,
    bearer({ ...ok, typ }),
    "ERR_SVC_AUTH_BEARER_TYP",
  ]),
  [
    'bearer.acceptBoundTokens "yes"',
    bearer({ ...ok, acceptBoundTokens: "yes" }),
    "ERR_SVC_AUTH_BEARER_ACCEPT_BOUND_TOKENS",
  ],
  // authenticate
  ["authenticate()", () => authenticate(undefined as never), "ERR_SVC_AUTH_OPTIONS"],
  ["authenticate without a scheme", () => authenticate({ realm: "r" }), "ERR_SVC_AUTH_OPTIONS"],
  ['authenticate realm ""', () => authenticate({ realm: "", basic: { verify } }), "ERR_SVC_AUTH_REALM"],
  // RFC 9110 §11.5: a quoted-string cannot carry U+2013 (Node refused the header on every 401)
  // nor a line break (dropped from the challenge).
  [
    'authenticate realm "Employees – API"',
    () => authenticate({ realm: "Employees – API", basic: { verify } }),
    "ERR_SVC_AUTH_REALM",
  ],
  [
    'authenticate realm "api\\n"',
    () => authenticate({ realm: "api\n", basic: { verify } }),
    "ERR_SVC_AUTH_REALM",
  ],
  [
    'authenticate optional "false"',
    () => authenticate({ realm: "r", basic: { verify }, optional: "false" as never }),
    "ERR_SVC_AUTH_OPTIONAL",
  ],
  [
    "authenticate bearer: true",
    () => authenticate({ realm: "r", bearer: true as never }),
    "ERR_SVC_AUTH_BEARER",
  ],
  [
    "authenticate basic: true",
    () => authenticate({ realm: "r", basic: true as never }),
    "ERR_SVC_AUTH_BASIC",
  ],
  // createBasicVerifier (already coded; one row each)
  ["basic.verify missing", () => createBasicVerifier({} as never), "ERR_SVC_AUTH_BASIC_VERIFY"],
  [
    "basic.concurrency 0",
    () => createBasicVerifier({ verify, concurrency: 0 }),
    "ERR_SVC_AUTH_BASIC_CONCURRENCY",
  ],
  ["basic.queue -1", () => createBasicVerifier({ verify, queue: -1 }), "ERR_SVC_AUTH_BASIC_QUEUE"],
  [
    "basic.busyRetryAfter -1",
    () => createBasicVerifier({ verify, busyRetryAfter: -1 }),
    "ERR_SVC_AUTH_BASIC_BUSY_RETRY_AFTER",
  ],
  [
    "basic.cache.ttl 0",
    () => createBasicVerifier({ verify, cache: { ttl: 0 } }),
    "ERR_SVC_AUTH_BASIC_CACHE_TTL",
  ],
  [
    "basic.failureLimit.failMode",
    () =>
      createBasicVerifier({
        verify,
        failureLimit: { perClient: { consume: async () => ({}) } as never, failMode: "maybe" as never },
      }),
    "ERR_SVC_AUTH_BASIC_FAILURE_LIMIT_FAIL_MODE",
  ],
  // requireScopes / requireRoles / authorize
  ["requireScopes()", () => requireScopes(), "ERR_SVC_AUTH_REQUIRE_SCOPES"],
  ['requireScopes("a b")', () => requireScopes("a b"), "ERR_SVC_AUTH_REQUIRE_SCOPES"],
  // RFC 6750 §3: scope values are printable ASCII; "€" made every Bearer 403 an error page.
  ['requireScopes("lesen:€")', () => requireScopes("lesen:€"), "ERR_SVC_AUTH_REQUIRE_SCOPES"],
  ['requireScopes("données:lire")', () => requireScopes("données:lire"), "ERR_SVC_AUTH_REQUIRE_SCOPES"],
  ['requireRoles("")', () => requireRoles(""), "ERR_SVC_AUTH_REQUIRE_ROLES"],
  ['authorize("admin")', () => authorize("admin" as never), "ERR_SVC_AUTH_AUTHORIZE_PREDICATE"],
  // createTokenIssuer
  ["tokenIssuer: null", () => createTokenIssuer(null as never), "ERR_SVC_AUTH_TOKEN_ISSUER"],
  ['tokenIssuer.issuer ""', issuer({ issuer: "" }), "ERR_SVC_AUTH_TOKEN_ISSUER_ISSUER"],
  ["tokenIssuer.audience []", issuer({ audience: [] }), "ERR_SVC_AUTH_TOKEN_ISSUER_AUDIENCE"],
  ["tokenIssuer.ttl 1.5", issuer({ ttl: 1.5 }), "ERR_SVC_AUTH_TOKEN_ISSUER_TTL"],
  ['tokenIssuer.algorithm "HS256"', issuer({ algorithm: "HS256" }), "ERR_SVC_AUTH_TOKEN_ISSUER_ALGORITHM"],
  [
    "tokenIssuer.privateKey a public key",
    issuer({ privateKey: publicKey }),
    "ERR_SVC_AUTH_TOKEN_ISSUER_PRIVATE_KEY",
  ],
  ['tokenIssuer.privateKey "x"', issuer({ privateKey: "x" }), "ERR_SVC_AUTH_TOKEN_ISSUER_PRIVATE_KEY"],
  ['tokenIssuer.kid ""', issuer({ kid: "", privateKey }), "ERR_SVC_AUTH_TOKEN_ISSUER_KID"],
  ["tokenIssuer.now 0", issuer({ now: 0, privateKey }), "ERR_SVC_AUTH_TOKEN_ISSUER_NOW"],
  // nonce stores
  ["memoryNonceStore.max 0", () => memoryNonceStore({ max: 0 }), "ERR_SVC_AUTH_MEMORY_NONCE_STORE_MAX"],
  [
    "memoryNonceStore.now 1",
    () => memoryNonceStore({ now: 1 as never }),
    "ERR_SVC_AUTH_MEMORY_NONCE_STORE_NOW",
  ],
  [
    "redisNonceStore.client {}",
    () => redisNonceStore({ client: {} as never }),
    "ERR_SVC_AUTH_REDIS_NONCE_STORE_CLIENT",
  ],
  // password hashing
  ["passwordHash.logN 25", () => createPasswordHasher({ logN: 25 }), "ERR_SVC_AUTH_PASSWORD_HASH_LOG_N"],
  ["passwordHash.r 0", () => createPasswordHasher({ r: 0 }), "ERR_SVC_AUTH_PASSWORD_HASH_R"],
  ["passwordHash.p 1000", () => createPasswordHasher({ p: 1000 }), "ERR_SVC_AUTH_PASSWORD_HASH_P"],
  // SOAP (already coded; one row)
  ["soap.verify 1", () => createSoapCredentialsVerifier({ verify: 1 } as never), "ERR_SVC_AUTH_SOAP_VERIFY"],
];

describe("every refused option: a TypeError with its code, at construction", () => {
  it.each(cases)("%s → %s", (_label, construct, code) => {
    expect(construct).toThrow(expect.objectContaining({ name: "TypeError", code }));
  });

  it.each<[string, () => Promise<unknown>, string]>([
    [
      "discoverIssuer(issuer) not a URL",
      () => discoverIssuer("issuer"),
      "ERR_SVC_AUTH_DISCOVER_ISSUER_ISSUER",
    ],
    [
      "discoverIssuer(issuer) with a query",
      () => discoverIssuer("https://i.example/?tenant=a"),
      "ERR_SVC_AUTH_DISCOVER_ISSUER_ISSUER",
    ],
    [
      "discoverIssuer maxBytes 0",
      () => discoverIssuer("https://i.example/", { maxBytes: 0 }),
      "ERR_SVC_AUTH_DISCOVER_ISSUER_MAX_BYTES",
    ],
    ["hashPassword logN 0", () => hashPassword("pw", { logN: 0 }), "ERR_SVC_AUTH_PASSWORD_HASH_LOG_N"],
  ])("%s → rejects with %s, before any I/O", async (_label, call, code) => {
    await expect(call()).rejects.toMatchObject({ name: "TypeError", code });
  });

  it("the README's option-codes table lists every code above", () => {
    const readme = readFileSync(new URL("../README.md", import.meta.url), "utf8");
    const table = readme.slice(
      readme.indexOf("<!-- option-codes -->"),
      readme.indexOf("<!-- /option-codes -->"),
    );
    const missing = [...new Set(cases.map(([, , code]) => code))].filter(
      (code) => !table.includes(`\`${code}\``),
    );
    expect(missing).toEqual([]);
  });

  it("a refused secret or key is never echoed in the message", () => {
    const pem = privateKey.export({ format: "pem", type: "pkcs8" }).toString();
    for (const construct of [
      bearer({ secret: SECRET, algorithms: ["HS256"] }),
      bearer({ key: pem.replace("PRIVATE", "PUBLIC"), algorithms: ["ES256"] }),
      issuer({ privateKey: pem.replace("PRIVATE", "PUBLIC") }),
    ]) {
      expect(construct).toThrow(TypeError);
      try {
        construct();
      } catch (err) {
        expect((err as Error).message).not.toContain(SECRET);
        expect((err as Error).message).not.toContain(pem.slice(40, 80));
      }
    }
  });
});

/**
 * A misspelt option name is refused at construction, with the name it most likely meant, at
 * every level of every factory's options: `issur` in place of `issuer` switched the `iss` check
 * off in silence, and a token of any issuer verified. Each row names the options object, the
 * misspelling and the right name, and builds the options with either; the right name must pass.
 */
describe("unknown option names: refused at every level, with a did-you-mean", () => {
  const limiter = { consume: () => ({ allowed: true, remaining: 5, limit: 5, retryAfterMs: 0 }) };
  const jwksUri = "https://i.example/jwks";
  const redis = { call: async () => "OK" };
  type Build = (name: string, value: unknown) => unknown;
  const rows: [path: string, wrong: string, right: string, value: unknown, build: Build][] = [
    [
      "",
      "optinal",
      "optional",
      true,
      (n, v) => authenticate({ realm: "r", basic: { verify }, [n]: v } as never),
    ],
    ["", "realmm", "realm", "r", (n, v) => authenticate({ basic: { verify }, realm: "r", [n]: v } as never)],
    [
      "bearer.",
      "issur",
      "issuer",
      "https://good/",
      (n, v) => authenticate({ realm: "r", bearer: { ...ok, [n]: v } } as never),
    ],
    ["bearer.", "audiance", "audience", "a", (n, v) => createBearerVerifier({ ...ok, [n]: v } as never)],
    [
      "bearer.",
      "clocktolerance",
      "clockTolerance",
      5,
      (n, v) => createBearerVerifier({ ...ok, [n]: v } as never),
    ],
    [
      "bearer.cache.",
      "maxTTL",
      "maxTtl",
      60,
      (n, v) => createBearerVerifier({ ...ok, cache: { [n]: v } } as never),
    ],
    [
      "bearer.jwksOptions.",
      "cacheMaxAgee",
      "cacheMaxAge",
      1000,
      (n, v) => createBearerVerifier({ jwksUri, algorithms: ["ES256"], jwksOptions: { [n]: v } } as never),
    ],
    [
      "bearer.",
      "acceptBoundToken",
      "acceptBoundTokens",
      true,
      (n, v) => authenticate({ realm: "r", bearer: { ...ok, [n]: v } } as never),
    ],
    // A local key source takes no JWKS settings, but a misspelling there is still one.
    [
      "bearer.jwksOptions.",
      "maxbytes",
      "maxBytes",
      1000,
      (n, v) => createBearerVerifier({ ...ok, jwksOptions: { [n]: v } } as never),
    ],
    [
      "bearer.issuers.",
      "jwksUrl",
      "jwksUri",
      "https://i.example/jwks",
      (n, v) =>
        createBearerVerifier({
          algorithms: ["ES256"],
          issuers: [{ issuer: "https://i.example/", [n]: v }],
        } as never),
    ],
    [
      "bearer.discovery.",
      "cooldownDurration",
      "cooldownDuration",
      1000,
      (n, v) =>
        createBearerVerifier({
          issuerBaseURL: "https://i.example/",
          algorithms: ["ES256"],
          discovery: { [n]: v },
        } as never),
    ],
    [
      "basic.",
      "concurency",
      "concurrency",
      1,
      (n, v) => authenticate({ realm: "r", basic: { verify, [n]: v } } as never),
    ],
    ["basic.", "queu", "queue", 1, (n, v) => createBasicVerifier({ verify, [n]: v } as never)],
    ["basic.cache.", "TTL", "ttl", 30, (n, v) => createBasicVerifier({ verify, cache: { [n]: v } } as never)],
    [
      "basic.failureLimit.",
      "perclient",
      "perClient",
      limiter,
      (n, v) => createBasicVerifier({ verify, failureLimit: { [n]: v } } as never),
    ],
    [
      "basic.failureLimit.",
      "failmode",
      "failMode",
      "closed",
      (n, v) => createBasicVerifier({ verify, failureLimit: { perClient: limiter, [n]: v } } as never),
    ],
    [
      "soap.",
      "clockSkw",
      "clockSkew",
      30,
      (n, v) => createSoapCredentialsVerifier({ verify, [n]: v } as never),
    ],
    [
      "tokenIssuer.",
      "tll",
      "ttl",
      60,
      (n, v) => createTokenIssuer({ issuer: "i", audience: "a", privateKey, [n]: v } as never),
    ],
    ["memoryNonceStore.", "maxx", "max", 10, (n, v) => memoryNonceStore({ [n]: v } as never)],
    [
      "redisNonceStore.",
      "timeout",
      "timeoutMs",
      500,
      (n, v) => redisNonceStore({ client: redis, [n]: v } as never),
    ],
    ["passwordHash.", "logn", "logN", 12, (n, v) => createPasswordHasher({ [n]: v } as never)],
  ];

  it.each(rows)(
    '%s%s → ERR_SVC_AUTH_UNKNOWN_OPTION, did you mean "%s"',
    (path, wrong, right, value, build) => {
      expect(() => build(wrong, value)).toThrow(
        expect.objectContaining({
          name: "TypeError",
          code: "ERR_SVC_AUTH_UNKNOWN_OPTION",
          message: expect.stringContaining(
            `unknown option "${path}${wrong}" (did you mean "${path}${right}"?)`,
          ),
        }),
      );
      expect(() => build(right, value)).not.toThrow();
    },
  );

  const asyncRows: [
    path: string,
    wrong: string,
    right: string,
    value: unknown,
    call: (name: string, value: unknown) => Promise<unknown>,
  ][] = [
    [
      "discoverIssuer.",
      "allowHTTP",
      "allowHttp",
      true,
      (n, v) =>
        discoverIssuer("https://i.example/", {
          fetch: async () => new Response("{}", { status: 500 }),
          [n]: v,
        } as never).catch((err: unknown) => {
          if ((err as { code?: string }).code === "ERR_SVC_AUTH_UNKNOWN_OPTION") throw err;
        }),
    ],
    ["passwordHash.", "P", "p", 1, (n, v) => hashPassword("pw", { logN: 4, [n]: v } as never)],
    ["passwordHash.", "R", "r", 8, (n, v) => verifyPassword("pw", undefined, { logN: 4, [n]: v } as never)],
    [
      "soap.",
      "getpassword",
      "getPassword",
      () => "pw",
      (n, v) => verifySoapCredentials([], { verify, [n]: v } as never).catch(expectFault),
    ],
    [
      "client.",
      "adress",
      "address",
      "192.0.2.1",
      (n, v) =>
        createSoapCredentialsVerifier({ verify })
          .verify([], { [n]: v } as never)
          .catch(expectFault),
    ],
  ];

  it.each(asyncRows)(
    '%s%s → rejects with ERR_SVC_AUTH_UNKNOWN_OPTION, did you mean "%s"',
    async (path, wrong, right, value, call) => {
      await expect(call(wrong, value)).rejects.toMatchObject({
        name: "TypeError",
        code: "ERR_SVC_AUTH_UNKNOWN_OPTION",
        message: expect.stringContaining(
          `unknown option "${path}${wrong}" (did you mean "${path}${right}"?)`,
        ),
      });
      await expect(call(right, value)).resolves.not.toThrow();
    },
  );

  it("a nested options object that is not an object keeps its own code: bearer.cache [] → ERR_SVC_AUTH_BEARER_CACHE", () => {
    expect(() => createBearerVerifier({ ...ok, cache: [] } as never)).toThrow(
      expect.objectContaining({ code: "ERR_SVC_AUTH_BEARER_CACHE" }),
    );
  });
});

/** An empty SOAP header is a FailedAuthentication, not an option refusal: swallowed for the right spelling. */
function expectFault(err: unknown): void {
  if ((err as { name?: string }).name !== "SoapAuthError") throw err;
}
