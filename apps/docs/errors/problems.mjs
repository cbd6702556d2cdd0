// The error record codes (`/problems/<code>` pages): for each, the package that answers with it,
// when, the status, what the client and the operator should do, and an example: a Fetch app
// (`export default { fetch }`), the requests sent to it, and the response to the last one, as
// `apps/docs/test/error-codes.test.ts` receives it (a value "…" varies from run to run).

const SECRET = "an HS256 secret of at least 32 bytes!";
const errors = 'import { withErrors } from "@svc/errors/fetch";';
/** Problem details (RFC 9457) with \`type\` from the code: what a client matches on. */
const problemTypeBase = '{ problemTypeBase: "https://api.example.com/problems/" }';
const bearer = `{ algorithms: ["HS256"], secret: "${SECRET}" }`;

/** @type {Record<string, { pkg: string; status: number; when: string; client: string; operator: string; app: string; requests: { method?: string; path: string; headers?: Record<string, string>; body?: string }[]; response: { headers?: Record<string, string>; body: Record<string, unknown> } }>} */
export const problems = {
  rate_limited: {
    pkg: "ratelimit",
    status: 429,
    when: "a client has spent its quota for the window: `rateLimit()` refuses the request before the route runs",
    client:
      "Wait the seconds `Retry-After` gives (or until `RateLimit`'s `t`) before retrying; do not retry at once.",
    operator:
      "Nothing, when the quota is meant; a legitimate client refused often needs a larger `limit`, a `cost` that fits, or its own `key`.",
    app: `${errors}
import { rateLimit } from "@svc/ratelimit/fetch";

const limiter = rateLimit({ limit: 1, windowMs: 60_000, clientAddressHeader: "cf-connecting-ip" });
export default { fetch: withErrors(limiter.wrap(async () => Response.json({ results: [] })), ${problemTypeBase}) };
`,
    requests: [
      { path: "/search", headers: { "cf-connecting-ip": "203.0.113.7" } },
      { path: "/search", headers: { "cf-connecting-ip": "203.0.113.7" } },
    ],
    response: {
      headers: {
        "content-type": "application/problem+json; charset=utf-8",
        "ratelimit-policy": '"default";q=1;w=60',
        "retry-after": "…",
        ratelimit: "…",
      },
      body: {
        type: "https://api.example.com/problems/rate_limited",
        title: "Too Many Requests",
        status: 429,
        detail: "Too many requests",
        instance: "/search",
        timestamp: "…",
        code: "rate_limited",
      },
    },
  },
  invalid_token: {
    pkg: "auth",
    status: 401,
    when: "the request's bearer token is malformed, expired, not yet valid, or not signed by a key the verifier trusts",
    client:
      "Get a new access token from the authorization server and retry with it; do not retry the same token.",
    operator:
      "When valid tokens are refused, check `bearer`'s `issuer`, `audience`, `algorithms` and key source against the tokens' header and claims (the diagnostics channel names the reason).",
    app: `${errors}
import { authenticate } from "@svc/auth/fetch";

const auth = authenticate({ realm: "api", bearer: ${bearer} });
export default { fetch: withErrors(auth.wrap(async () => Response.json({ id: 7 })), ${problemTypeBase}) };
`,
    requests: [{ path: "/orders/7", headers: { authorization: "Bearer not.a.token" } }],
    response: {
      headers: {
        "content-type": "application/problem+json; charset=utf-8",
        "www-authenticate": 'Bearer realm="api", error="invalid_token"',
      },
      body: {
        type: "https://api.example.com/problems/invalid_token",
        title: "Unauthorized",
        status: 401,
        detail: "The access token is invalid",
        instance: "/orders/7",
        timestamp: "…",
        code: "invalid_token",
      },
    },
  },
  insufficient_scope: {
    pkg: "auth",
    status: 403,
    when: "the request is authenticated but its token lacks a scope the route requires (`requireScopes()`)",
    client:
      "Ask the authorization server for a token with the scope `WWW-Authenticate` names; retrying with the same token is refused again.",
    operator:
      "Nothing, when the scope is meant; else grant the scope to the client at the authorization server.",
    app: `${errors}
import { createTokenIssuer } from "@svc/auth";
import { authenticate, requireScopes } from "@svc/auth/fetch";

// The authorization server's side, in memory for the example: a token with the scope orders:read.
const issuer = createTokenIssuer({ issuer: "https://auth.example.com", audience: "api" });
export const token = (await issuer.issue({ id: "ada", scopes: ["orders:read"] })).access_token;

const auth = authenticate({
  realm: "api",
  bearer: { algorithms: [issuer.algorithm], jwks: await issuer.jwks(), issuer: "https://auth.example.com", audience: "api" },
});
const canWrite = requireScopes("orders:write");
export default { fetch: withErrors(auth.wrap(canWrite.wrap(async () => Response.json({ id: 7 }))), ${problemTypeBase}) };
`,
    requests: [{ method: "POST", path: "/orders", headers: { authorization: "Bearer {token}" } }],
    response: {
      headers: {
        "content-type": "application/problem+json; charset=utf-8",
        "www-authenticate": 'Bearer realm="api", error="insufficient_scope", scope="orders:write"',
      },
      body: {
        type: "https://api.example.com/problems/insufficient_scope",
        title: "Forbidden",
        status: 403,
        detail: "You are not permitted to do this",
        instance: "/orders",
        timestamp: "…",
        code: "insufficient_scope",
      },
    },
  },
  invalid_credentials: {
    pkg: "auth",
    status: 401,
    when: "HTTP Basic credentials whose user name and password `basic.verify` does not accept",
    client:
      "Ask the user for the right credentials; every failed attempt spends the client's and the user name's failure budget.",
    operator:
      "Nothing for a mistyped password; many of them from one client show in the `too_many_failed_attempts` refusals.",
    app: `${errors}
import { authenticate } from "@svc/auth/fetch";

const verify = async (username: string, password: string) =>
  username === "ada" && password === "s3cret" ? { id: username } : undefined;
const auth = authenticate({ realm: "api", basic: { verify } });
export default { fetch: withErrors(auth.wrap(async () => Response.json({ id: 7 })), ${problemTypeBase}) };
`,
    requests: [
      {
        path: "/orders/7",
        headers: { authorization: `Basic ${Buffer.from("ada:wrong").toString("base64")}` },
      },
    ],
    response: {
      headers: {
        "content-type": "application/problem+json; charset=utf-8",
        "www-authenticate": 'Basic realm="api", charset="UTF-8"',
      },
      body: {
        type: "https://api.example.com/problems/invalid_credentials",
        title: "Unauthorized",
        status: 401,
        detail: "The user name or password is wrong",
        instance: "/orders/7",
        timestamp: "…",
        code: "invalid_credentials",
      },
    },
  },
  unsupported_media_type: {
    pkg: "negotiate",
    status: 415,
    when: 'a request body of a media type `parseBody()` does not read, with `others: "refuse"`',
    client:
      "Send the body in a media type the `Accept-Post`/`Accept-Patch` of the resource lists (here `application/json`).",
    operator: "Add the media type to `parseBody`'s `types` if the route should take it.",
    app: `${errors}
import { parseBody } from "@svc/negotiate/fetch";

const read = parseBody({ types: ["json"], others: "refuse" });
export default { fetch: withErrors(async (request) => Response.json(await read(request), { status: 201 }), ${problemTypeBase}) };
`,
    requests: [
      { method: "POST", path: "/orders", headers: { "content-type": "text/csv" }, body: "id,qty\n7,1\n" },
    ],
    response: {
      headers: {
        "content-type": "application/problem+json; charset=utf-8",
        "accept-post": "application/json",
      },
      body: {
        type: "https://api.example.com/problems/unsupported_media_type",
        title: "Unsupported Media Type",
        status: 415,
        detail: 'Content-Type "text/csv" is not supported; accepted: application/json',
        instance: "/orders",
        timestamp: "…",
        code: "unsupported_media_type",
      },
    },
  },
  malformed_body: {
    pkg: "negotiate",
    status: 400,
    when: "a request body that does not parse as its `Content-Type` says (JSON, XML or a form)",
    client: "Fix the body so that it parses as the media type it is labelled with.",
    operator: "Nothing: it is the client's body.",
    app: `${errors}
import { parseBody } from "@svc/negotiate/fetch";

const read = parseBody({ types: ["json"] });
export default { fetch: withErrors(async (request) => Response.json(await read(request), { status: 201 }), ${problemTypeBase}) };
`,
    requests: [
      {
        method: "POST",
        path: "/orders",
        headers: { "content-type": "application/json" },
        body: '{"qty": 1,',
      },
    ],
    response: {
      headers: { "content-type": "application/problem+json; charset=utf-8" },
      body: {
        type: "https://api.example.com/problems/malformed_body",
        title: "Bad Request",
        status: 400,
        detail: "Malformed JSON body: not valid JSON",
        instance: "/orders",
        timestamp: "…",
        code: "malformed_body",
      },
    },
  },
  content_too_large: {
    pkg: "negotiate",
    status: 413,
    when: "a request body longer than `parseBody`'s `limit`",
    client: "Send a smaller body (split the upload), or ask the API's owner about its limit.",
    operator: "Raise `limit` if such bodies are expected on this route.",
    app: `${errors}
import { parseBody } from "@svc/negotiate/fetch";

const read = parseBody({ types: ["json"], limit: 64 });
export default { fetch: withErrors(async (request) => Response.json(await read(request), { status: 201 }), ${problemTypeBase}) };
`,
    requests: [
      {
        method: "POST",
        path: "/orders",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ note: "x".repeat(100) }),
      },
    ],
    response: {
      headers: { "content-type": "application/problem+json; charset=utf-8", connection: "close" },
      body: {
        type: "https://api.example.com/problems/content_too_large",
        title: "Content Too Large",
        status: 413,
        detail: "The request body exceeds 64 bytes",
        instance: "/orders",
        timestamp: "…",
        code: "content_too_large",
      },
    },
  },
  precondition_failed: {
    pkg: "conditional",
    status: 412,
    when: "a write whose `If-Match` names a version that is no longer the resource's (RFC 9110 §13.1.1)",
    client:
      "Read the resource again, reapply the change to the current version, and retry with its `ETag` in `If-Match`.",
    operator: "Nothing: it is a lost update prevented.",
    app: `${errors}
import { preconditions } from "@svc/conditional/fetch";

const current = preconditions({ current: () => ({ etag: '"v3"' }) });
export default { fetch: withErrors(current.wrap(async () => new Response(null, { status: 204 })), ${problemTypeBase}) };
`,
    requests: [{ method: "PUT", path: "/orders/7", headers: { "if-match": '"v2"' } }],
    response: {
      headers: { "content-type": "application/problem+json; charset=utf-8", etag: '"v3"' },
      body: {
        type: "https://api.example.com/problems/precondition_failed",
        title: "Precondition Failed",
        status: 412,
        detail: "The resource has changed since the precondition was computed",
        instance: "/orders/7",
        timestamp: "…",
        code: "precondition_failed",
      },
    },
  },
  precondition_required: {
    pkg: "conditional",
    status: 428,
    when: "a write without `If-Match` (or `If-Unmodified-Since`) to a route whose preconditions are `required` (RFC 6585 §3)",
    client: "Read the resource first, and send its `ETag` in `If-Match` with the write.",
    operator: "Nothing, when writes are meant to be conditional.",
    app: `${errors}
import { preconditions } from "@svc/conditional/fetch";

const current = preconditions({ current: () => ({ etag: '"v3"' }), required: true });
export default { fetch: withErrors(current.wrap(async () => new Response(null, { status: 204 })), ${problemTypeBase}) };
`,
    requests: [{ method: "PUT", path: "/orders/7" }],
    response: {
      headers: { "content-type": "application/problem+json; charset=utf-8" },
      body: {
        type: "https://api.example.com/problems/precondition_required",
        title: "Precondition Required",
        status: 428,
        detail: "PUT requires a conditional request: send If-Match with the current ETag",
        instance: "/orders/7",
        timestamp: "…",
        code: "precondition_required",
      },
    },
  },
};
