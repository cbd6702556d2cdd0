import * as diagnostics_channel from "node:diagnostics_channel";
import { createServer } from "node:http";
import { type RequestView, subscribeDiagnostics, unsubscribeDiagnostics } from "@svc/kernel";
import { type Listening, listenOn } from "@svc/test-utils";
import { type CryptoKey, errors, exportJWK, generateKeyPair, type JWK, SignJWT } from "jose";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { type AuthenticateOptions, type AuthRequest, createAuthenticator } from "./authenticate.js";
import { scopeCheck } from "./authorize.js";
import { type AuthDiagnostic, authChannel } from "./diagnostics.js";
import type { Principal } from "./principal.js";

const ISS = "https://issuer.test/";
const AUD = "https://api.test/";
const now = Math.floor(Date.now() / 1000);

const key = await generateKeyPair("ES256");
const other = await generateKeyPair("ES256");
const es384 = await generateKeyPair("ES384");
const publicJwk: JWK = { ...(await exportJWK(key.publicKey)), kid: "k1", alg: "ES256" };
const jwks = { keys: [publicJwk] };

interface Claims {
  kid?: string;
  signer?: CryptoKey;
  alg?: string;
  iss?: string;
  aud?: string;
  exp?: number;
  nbf?: number;
}

function sign(claims: Claims = {}): Promise<string> {
  const jwt = new SignJWT({ scope: "read" })
    .setProtectedHeader({ alg: claims.alg ?? "ES256", kid: claims.kid ?? "k1" })
    .setSubject("ada")
    .setIssuer(claims.iss ?? ISS)
    .setAudience(claims.aud ?? AUD)
    .setIssuedAt(now - 10)
    .setExpirationTime(claims.exp ?? now + 600);
  if (claims.nbf !== undefined) jwt.setNotBefore(claims.nbf);
  return jwt.sign(claims.signer ?? key.privateKey);
}

const basicOf = (user: string, password: string) =>
  `Basic ${Buffer.from(`${user}:${password}`).toString("base64")}`;

const verify = async (user: string, password: string) =>
  user === "bob" && password === "s3cret" ? { id: "bob" } : null;

function options(extra: Partial<AuthenticateOptions> = {}): AuthenticateOptions {
  return {
    realm: "api",
    bearer: { jwks, algorithms: ["ES256"], issuer: ISS, audience: AUD },
    basic: { verify, failureLimit: false },
    ...extra,
  };
}

function view(authorization?: string): RequestView {
  return {
    method: "GET",
    url: "/me",
    headers: authorization === undefined ? {} : { authorization },
    socket: { remoteAddress: "127.0.0.1" },
  } as unknown as RequestView;
}

/** The messages published on `svc:auth` while `run` runs. */
async function heard(run: () => Promise<unknown>): Promise<AuthDiagnostic[]> {
  const messages: AuthDiagnostic[] = [];
  const listener = (message: unknown) => messages.push(message as AuthDiagnostic);
  subscribeDiagnostics("svc:auth", listener);
  try {
    await run().catch(() => undefined);
  } finally {
    unsubscribeDiagnostics("svc:auth", listener);
  }
  return messages;
}

interface Row {
  name: string;
  authorization: () => Promise<string | undefined>;
  options?: Partial<AuthenticateOptions>;
  want: Record<string, unknown>;
  /** The class of jose's error the message's `error` (and the 401's `cause`) is. */
  jose?: new (
    ...args: never[]
  ) => Error;
  status?: number;
}

const rows: Row[] = [
  {
    name: "a valid token → authenticated, bearer, its subject",
    authorization: async () => `Bearer ${await sign()}`,
    want: { decision: "authenticated", scheme: "bearer", principal: "ada" },
  },
  {
    name: "no Authorization, optional → anonymous",
    authorization: async () => undefined,
    options: { optional: true },
    want: { decision: "anonymous" },
  },
  {
    name: "no Authorization → refused, missing, no scheme",
    authorization: async () => undefined,
    want: { decision: "refused", scheme: undefined, reason: "missing" },
    status: 401,
  },
  {
    name: "Authorization: Digest … → refused, missing, scheme digest",
    authorization: async () => 'Digest username="bob"',
    want: { decision: "refused", scheme: "digest", reason: "missing" },
    status: 401,
  },
  {
    name: "an expired token → refused, expired, JWTExpired",
    authorization: async () => `Bearer ${await sign({ exp: now - 3600 })}`,
    want: { decision: "refused", scheme: "bearer", reason: "expired" },
    jose: errors.JWTExpired,
    status: 401,
  },
  {
    name: "nbf an hour ahead → refused, not-yet-valid",
    authorization: async () => `Bearer ${await sign({ nbf: now + 3600 })}`,
    want: { decision: "refused", scheme: "bearer", reason: "not-yet-valid" },
    jose: errors.JWTClaimValidationFailed,
    status: 401,
  },
  {
    name: "another audience → refused, audience",
    authorization: async () => `Bearer ${await sign({ aud: "https://other.test/" })}`,
    want: { decision: "refused", scheme: "bearer", reason: "audience" },
    jose: errors.JWTClaimValidationFailed,
    status: 401,
  },
  {
    name: "another issuer → refused, issuer",
    authorization: async () => `Bearer ${await sign({ iss: "https://evil.test/" })}`,
    want: { decision: "refused", scheme: "bearer", reason: "issuer" },
    jose: errors.JWTClaimValidationFailed,
    status: 401,
  },
  {
    name: "signed by another key under kid k1 → refused, signature",
    authorization: async () => `Bearer ${await sign({ signer: other.privateKey })}`,
    want: { decision: "refused", scheme: "bearer", reason: "signature" },
    jose: errors.JWSSignatureVerificationFailed,
    status: 401,
  },
  {
    name: "kid k9, not in the set → refused, unknown-key",
    authorization: async () => `Bearer ${await sign({ kid: "k9" })}`,
    want: { decision: "refused", scheme: "bearer", reason: "unknown-key" },
    jose: errors.JWKSNoMatchingKey,
    status: 401,
  },
  {
    name: "alg ES384, ES256 allowed → refused, algorithm",
    authorization: async () => `Bearer ${await sign({ alg: "ES384", signer: es384.privateKey })}`,
    want: { decision: "refused", scheme: "bearer", reason: "algorithm" },
    jose: errors.JOSEAlgNotAllowed,
    status: 401,
  },
  {
    name: "Bearer abc.def (two parts) → refused, malformed",
    authorization: async () => "Bearer abc.def",
    want: { decision: "refused", scheme: "bearer", reason: "malformed" },
    status: 401,
  },
  {
    name: "Bearer a b → 400, refused, malformed",
    authorization: async () => "Bearer a b",
    want: { decision: "refused", scheme: "bearer", reason: "malformed" },
    status: 400,
  },
  {
    name: "Basic bob:s3cret → authenticated, basic, bob",
    authorization: async () => basicOf("bob", "s3cret"),
    want: { decision: "authenticated", scheme: "basic", principal: "bob" },
  },
  {
    name: "Basic bob:wrong → refused, bad-credentials",
    authorization: async () => basicOf("bob", "wrong"),
    want: { decision: "refused", scheme: "basic", reason: "bad-credentials" },
    status: 401,
  },
  {
    name: "Basic, the client's failure budget spent → 429, refused, budget-spent",
    authorization: async () => basicOf("bob", "s3cret"),
    options: {
      basic: {
        verify,
        failureLimit: {
          perClient: { consume: () => ({ allowed: false, remaining: 0, retryAfterMs: 60_000 }) },
        },
      },
    },
    want: { decision: "refused", scheme: "basic", reason: "budget-spent" },
    status: 429,
  },
];

describe("svc:auth: one message per decision of the core", () => {
  for (const row of rows) {
    it(row.name, async () => {
      const authenticator = createAuthenticator(options(row.options));
      const request = view(await row.authorization());
      const native = { native: true };
      let thrown: unknown;
      const messages = await heard(() =>
        authenticator.authenticate(request, native).catch((err: unknown) => {
          thrown = err;
        }),
      );
      expect(messages).toHaveLength(1);
      const message = messages[0] as AuthDiagnostic & { error?: unknown };
      expect(message).toMatchObject({ request: native, ...row.want });
      expect(Object.keys(message).sort()).toEqual(
        [...Object.keys(row.want), "request", ...(message.error === undefined ? [] : ["error"])].sort(),
      );
      if (row.status !== undefined) expect(thrown).toMatchObject({ status: row.status });
      if (row.jose !== undefined) {
        expect(message.error).toBeInstanceOf(row.jose);
        // The 401 carries the same error as its cause; the client's record does not.
        expect((thrown as Error).cause).toBe(message.error);
        expect((thrown as Error).message).toBe("The access token is invalid");
      }
    });
  }

  it("Basic, every hashing slot and the queue taken → 503, refused, overloaded", async () => {
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const authenticator = createAuthenticator(
      options({
        basic: {
          verify: async (user, password) => {
            await held;
            return verify(user, password);
          },
          failureLimit: false,
          concurrency: 1,
          queue: 0,
        },
      }),
    );
    const first = authenticator.authenticate(view(basicOf("bob", "s3cret")));
    const messages = await heard(() =>
      authenticator.authenticate(view(basicOf("carol", "x")), { second: 1 }),
    );
    release();
    await first;
    expect(messages).toEqual([
      { request: { second: 1 }, decision: "refused", scheme: "basic", reason: "overloaded" },
    ]);
  });

  it("a guard's 403 → refused, insufficient-scope, the principal's scheme", async () => {
    const principal: Principal = { id: "ada", roles: [], scopes: ["read"], scheme: "bearer" };
    const native = { guarded: true };
    const check = scopeCheck(["write"]);
    const messages = await heard(async () => {
      expect(check({ principal, realm: "api", challenges: 'Bearer realm="api"' }, native)).toMatchObject({
        status: 403,
      });
    });
    expect(messages).toEqual([
      { request: native, decision: "refused", scheme: "bearer", reason: "insufficient-scope" },
    ]);
  });

  it("a guard without a principal → refused, missing", async () => {
    const messages = await heard(async () => {
      scopeCheck(["write"])({ principal: undefined, realm: "api", challenges: 'Bearer realm="api"' }, view());
    });
    expect(messages).toMatchObject([{ decision: "refused", scheme: undefined, reason: "missing" }]);
  });

  it("no request given: the message carries the view (node:http, Express)", async () => {
    const request = view(`Bearer ${await sign()}`) as unknown as AuthRequest;
    const messages = await heard(() => createAuthenticator(options()).authenticate(request));
    expect(messages[0]?.decision).toBe("authenticated");
    expect((messages[0] as { request: unknown }).request).toBe(request);
  });

  it("no subscriber: no message is built or published, the decisions stand", async () => {
    expect(authChannel.hasSubscribers).toBe(false);
    const publish = vi.spyOn(diagnostics_channel.channel(authChannel.name), "publish");
    try {
      const authenticator = createAuthenticator(options());
      await expect(authenticator.authenticate(view(`Bearer ${await sign()}`))).resolves.toMatchObject({
        principal: { id: "ada" },
      });
      const expired = authenticator.authenticate(view(`Bearer ${await sign({ exp: now - 3600 })}`));
      await expect(expired).rejects.toMatchObject({ status: 401, cause: expect.any(errors.JWTExpired) });
      await expect(authenticator.authenticate(view())).rejects.toMatchObject({ status: 401 });
      expect(publish).not.toHaveBeenCalled();
    } finally {
      publish.mockRestore();
    }
  });
});

describe("svc:auth: the key set's downloads", () => {
  let keyServer: Listening;
  let up = true;
  let served = 0;
  beforeAll(async () => {
    keyServer = await listenOn(
      createServer((_req, res) => {
        served++;
        if (!up) {
          res.statusCode = 500;
          res.end("down");
          return;
        }
        res.setHeader("Content-Type", "application/json");
        res.end(JSON.stringify({ keys: [publicJwk, { ...publicJwk, kid: "k2" }] }));
      }),
    );
  });
  afterAll(async () => {
    await keyServer.close();
  });
  afterEach(() => {
    up = true;
  });

  function remote() {
    return createAuthenticator({
      realm: "api",
      bearer: {
        jwksUri: `${keyServer.url}/jwks.json`,
        allowHttp: true,
        onWarning: () => {},
        algorithms: ["ES256"],
        issuer: ISS,
        audience: AUD,
        jwksOptions: { failureCooldownDuration: 60_000 },
      },
    });
  }

  it("a download → jwks-refreshed with its uri and key count, traced on svc:auth:jwks", async () => {
    const uri = `${keyServer.url}/jwks.json`;
    const traced: [string, unknown][] = [];
    const listeners = (["start", "end", "asyncStart", "asyncEnd", "error"] as const).map((event) => {
      const name = `tracing:svc:auth:jwks:${event}`;
      const listener = (context: unknown) => traced.push([event, { ...(context as object) }]);
      subscribeDiagnostics(name, listener);
      return () => unsubscribeDiagnostics(name, listener);
    });
    try {
      const native = { remote: true };
      const token = await sign();
      const messages = await heard(() => remote().authenticate(view(`Bearer ${token}`), native));
      expect(messages).toEqual([
        { decision: "jwks-refreshed", uri, keys: 2 },
        { request: native, decision: "authenticated", scheme: "bearer", principal: "ada" },
      ]);
      expect(traced.map(([event]) => event)).toEqual(["start", "end", "asyncStart", "asyncEnd"]);
      expect(traced[0]?.[1]).toEqual({ uri });
    } finally {
      for (const off of listeners) off();
    }
  });

  it("the key server answers 500 → jwks-failed with its error, the request refused, keys-unavailable", async () => {
    up = false;
    const before = served;
    const token = await sign();
    const messages = await heard(() => remote().authenticate(view(`Bearer ${token}`)));
    expect(served).toBe(before + 1);
    expect(messages).toMatchObject([
      { decision: "jwks-failed", uri: `${keyServer.url}/jwks.json`, error: expect.any(Error) },
      { decision: "refused", scheme: "bearer", reason: "keys-unavailable", error: expect.any(Error) },
    ]);
    expect(messages[0]).not.toHaveProperty("request");
  });
});
