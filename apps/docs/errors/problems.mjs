// The error record codes (`/problems/<code>` pages): for each, the package that answers with it,
// when, the status, what the client and the operator should do, and an example: a Fetch app
// (`export default { fetch }`), the requests sent to it, and the response to the last one, as
// `apps/docs/test/error-codes.test.ts` receives it (a value "…" varies from run to run).

const SECRET = "an HS256 secret of at least 32 bytes!";
const errors = 'import { withErrors } from "@svc/errors/fetch";';
/** Problem details (RFC 9457) with \`type\` from the code: what a client matches on. */
const problemTypeBase = '{ problemTypeBase: "https://api.example.com/problems/" }';
const pipeline = `${errors}
import { createPipeline, reply } from "@svc/kernel";
import { fetchAdapter } from "@svc/kernel/fetch";`;
const bearer = `{ algorithms: ["HS256"], secret: "${SECRET}" }`;
/** The `Idempotency-Key` step on a route of the response pipeline, the body handed over. */
const idempotent = `${pipeline}
import { MemoryStore } from "@svc/idempotency";
import { idempotency } from "@svc/idempotency/fetch";
`;
const idempotentApp = `const svc = fetchAdapter(createPipeline());
let orders = 0;
export default {
  fetch: withErrors(async (request) => {
    const body: unknown = await request.json(); // the fingerprint's input
    return svc.respond(request, () => reply({ id: ++orders, order: body }, { status: 201 }), {
      route: { idempotency: keys },
      body,
    });
  }, ${problemTypeBase}),
};
`;

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
  invalid_request: {
    pkg: "auth",
    status: 400,
    when: "an `Authorization` field that is no credentials of a scheme the route takes, as RFC 6750 §3.1 and RFC 7617 write them",
    client:
      "Send `Authorization: Bearer <token>` (or `Basic <base64 of user:password>`), one field, one space after the scheme.",
    operator: "Nothing: it is the client's header; many from one client point at a broken client library.",
    app: `${errors}
import { authenticate } from "@svc/auth/fetch";

const auth = authenticate({ realm: "api", bearer: ${bearer} });
export default { fetch: withErrors(auth.wrap(async () => Response.json({ id: 7 })), ${problemTypeBase}) };
`,
    requests: [{ path: "/orders/7", headers: { authorization: "Bearer" } }],
    response: {
      headers: {
        "content-type": "application/problem+json; charset=utf-8",
        "www-authenticate": 'Bearer realm="api", error="invalid_request"',
      },
      body: {
        type: "https://api.example.com/problems/invalid_request",
        title: "Bad Request",
        status: 400,
        detail: "The Authorization header is malformed",
        instance: "/orders/7",
        timestamp: "…",
        code: "invalid_request",
      },
    },
  },
  rate_limit_no_client_address: {
    pkg: "ratelimit",
    status: 500,
    when: "the limiter keys on the client's address and the request carries none it can read: a Fetch server that is told no connection, a proxy whose forwarded field is not trusted",
    client: "Nothing: the server is misconfigured; report it.",
    operator:
      "Tell the limiter the client's address: `clientAddressHeader` behind an edge that sets one (`cf-connecting-ip`), `connection` (Deno's `info.remoteAddr`, Bun's `server.requestIP`), `.wrap(handler, info)`, or a `key` of your own.",
    app: `${errors}
import { rateLimit } from "@svc/ratelimit/fetch";

const limiter = rateLimit({ limit: 100, windowMs: 60_000, clientAddressHeader: "cf-connecting-ip" });
export default { fetch: withErrors(limiter.wrap(async () => Response.json({ results: [] })), ${problemTypeBase}) };
`,
    requests: [{ path: "/search" }],
    response: {
      headers: { "content-type": "application/problem+json; charset=utf-8" },
      body: {
        type: "https://api.example.com/problems/rate_limit_no_client_address",
        title: "Internal Server Error",
        status: 500,
        detail: "An unexpected error occurred",
        instance: "/search",
        timestamp: "…",
      },
    },
  },
  misdirected_request: {
    pkg: "hal",
    status: 421,
    when: "a request whose `Host` (or the forwarded host a trusted proxy gives) is not a host the app serves, `allowedHosts()`",
    client: "Send the request to the API's own host name.",
    operator:
      "Add the host to `allowedHosts` if the app is meant to answer it (a new domain, a load balancer's health check by address).",
    app: `${errors}
import { allowedHosts } from "@svc/hal/fetch";

const hosts = allowedHosts(["api.example"]);
export default { fetch: withErrors(hosts.wrap(async () => Response.json({ id: 7 })), ${problemTypeBase}) };
`,
    requests: [{ path: "/orders/7", headers: { host: "evil.example" } }],
    response: {
      headers: { "content-type": "application/problem+json; charset=utf-8" },
      body: {
        type: "https://api.example.com/problems/misdirected_request",
        title: "Misdirected Request",
        status: 421,
        detail: "This service does not answer for the host the request names",
        instance: "/orders/7",
        timestamp: "…",
        code: "misdirected_request",
      },
    },
  },
  invalid_host: {
    pkg: "hal",
    status: 400,
    when: "a request whose `Host` is no host at all (RFC 9110 §7.2: a `uri-host` with an optional port), so no host check or link could use it",
    client: "Send a well-formed `Host`: a client library does so itself; a hand-written request may not.",
    operator: "Nothing: it is the client's header.",
    app: `${errors}
import { allowedHosts } from "@svc/hal/fetch";

const hosts = allowedHosts(["api.example"]);
export default { fetch: withErrors(hosts.wrap(async () => Response.json({ id: 7 })), ${problemTypeBase}) };
`,
    requests: [{ path: "/orders/7", headers: { host: "api.example:port" } }],
    response: {
      headers: { "content-type": "application/problem+json; charset=utf-8" },
      body: {
        type: "https://api.example.com/problems/invalid_host",
        title: "Bad Request",
        status: 400,
        detail: "The request's Host header is not a valid host",
        instance: "/orders/7",
        timestamp: "…",
        code: "invalid_host",
      },
    },
  },
  missing_api_version: {
    pkg: "versioning",
    status: 400,
    when: "a request that names no version where `versions()` requires one (`required: true`), on a path that is not version-neutral",
    client: "Name the version, as the API says: here the `API-Version` field (`API-Version: 2`).",
    operator:
      "Nothing, when clients must name a version; give `defaultVersion` for clients written before versioning.",
    app: `${pipeline}
import { versions } from "@svc/versioning";

const svc = fetchAdapter(createPipeline({ versioning: versions({ versions: [1, 2], required: true, uri: false }) }));
export default {
  fetch: withErrors((request) => svc.respond(request, () => reply({ id: 7 })), ${problemTypeBase}),
};
`,
    requests: [{ path: "/orders/7", headers: {} }],
    response: {
      headers: {
        "content-type": "application/problem+json; charset=utf-8",
        "api-supported-versions": "1, 2",
        vary: "API-Version, Accept-Version, Accept",
      },
      body: {
        type: "https://api.example.com/problems/missing_api_version",
        title: "Bad Request",
        status: 400,
        detail: "An API version is required; supported versions: 1, 2",
        instance: "/orders/7",
        timestamp: "…",
        code: "missing_api_version",
      },
    },
  },
  unsupported_api_version: {
    pkg: "versioning",
    status: 400,
    when: "a request naming a version `versions` does not list (a retired one, or one from the future)",
    client: "Use a version the API supports: the answer's `Vary` and the API's documentation name them.",
    operator: "Nothing, when the version was retired on purpose; else add it to `versions`.",
    app: `${pipeline}
import { versions } from "@svc/versioning";

const svc = fetchAdapter(createPipeline({ versioning: versions({ versions: [1, 2], required: true, uri: false }) }));
export default {
  fetch: withErrors((request) => svc.respond(request, () => reply({ id: 7 })), ${problemTypeBase}),
};
`,
    requests: [{ path: "/orders/7", headers: { "api-version": "9" } }],
    response: {
      headers: {
        "content-type": "application/problem+json; charset=utf-8",
        "api-supported-versions": "1, 2",
      },
      body: {
        type: "https://api.example.com/problems/unsupported_api_version",
        title: "Bad Request",
        status: 400,
        detail: "API version 9 (header API-Version) is not supported; supported versions: 1, 2",
        instance: "/orders/7",
        timestamp: "…",
        code: "unsupported_api_version",
      },
    },
  },
  malformed_api_version: {
    pkg: "versioning",
    status: 400,
    when: "a request whose version is not written in the scheme `versions` uses (here whole numbers: `v2`, `2.0` are malformed)",
    client: "Write the version as the API does (`2`).",
    operator: "Nothing: it is the client's request.",
    app: `${pipeline}
import { versions } from "@svc/versioning";

const svc = fetchAdapter(createPipeline({ versioning: versions({ versions: [1, 2], required: true, uri: false }) }));
export default {
  fetch: withErrors((request) => svc.respond(request, () => reply({ id: 7 })), ${problemTypeBase}),
};
`,
    requests: [{ path: "/orders/7", headers: { "api-version": "v2" } }],
    response: {
      headers: {
        "content-type": "application/problem+json; charset=utf-8",
        "api-supported-versions": "1, 2",
      },
      body: {
        type: "https://api.example.com/problems/malformed_api_version",
        title: "Bad Request",
        status: 400,
        detail: "Header API-Version must be one API version number",
        instance: "/orders/7",
        timestamp: "…",
        code: "malformed_api_version",
      },
    },
  },
  not_acceptable: {
    pkg: "negotiate",
    status: 406,
    when: "a request whose `Accept` admits none of the media types the representations offer (RFC 9110 §15.5.7)",
    client:
      "Accept one of the media types the detail lists (`application/json`, `application/xml`, ...), or `*/*`.",
    operator:
      "Nothing, when the type is not meant to be offered; else add a representation for it (`csvRepresentation()`, `xmlRepresentation()`).",
    app: `${pipeline}
import { representations } from "@svc/negotiate";

const svc = fetchAdapter(createPipeline({ representations: representations() }));
export default {
  fetch: withErrors((request) => svc.respond(request, () => reply({ id: 7 })), ${problemTypeBase}),
};
`,
    requests: [{ path: "/orders/7", headers: { accept: "text/csv, application/problem+json;q=0.1" } }],
    response: {
      headers: { "content-type": "application/problem+json; charset=utf-8", vary: "Accept" },
      body: {
        type: "https://api.example.com/problems/not_acceptable",
        title: "Not Acceptable",
        status: 406,
        detail:
          "None of the available representations is acceptable: application/json, application/xml, text/plain, text/html",
        instance: "/orders/7",
        timestamp: "…",
        code: "not_acceptable",
      },
    },
  },
  inexact_number: {
    pkg: "negotiate",
    status: 400,
    when: "a JSON body holding a number a JavaScript number does not hold exactly (`9007199254740993`, `1e400`), where `parseBody` has `exactNumbers: true` (RFC 8259 §6)",
    client: "Send such a number as a string (an id, an amount in minor units), as the API's schema says.",
    operator: "Nothing, when exact numbers are required; the field errors name each number.",
    app: `${errors}
import { parseBody } from "@svc/negotiate/fetch";

const read = parseBody({ types: ["json"], exactNumbers: true });
export default {
  fetch: withErrors(async (request) => Response.json(await read(request), { status: 201 }), ${problemTypeBase}),
};
`,
    requests: [
      {
        method: "POST",
        path: "/payments",
        headers: { "content-type": "application/json" },
        body: '{"id": 9007199254740993}',
      },
    ],
    response: {
      headers: { "content-type": "application/problem+json; charset=utf-8" },
      body: {
        type: "https://api.example.com/problems/inexact_number",
        title: "Bad Request",
        status: 400,
        detail: "JSON body: a number is not held exactly",
        instance: "/payments",
        timestamp: "…",
        code: "inexact_number",
        errors: [
          {
            field: "id",
            message:
              "must be a number held exactly by a 64-bit binary float (RFC 8259 §6); 9007199254740993 is not",
          },
        ],
      },
    },
  },
  rate_limit_cost_exceeds_quota: {
    pkg: "ratelimit",
    status: 429,
    when: "a request whose `cost` is more than the quota allows at once: no wait would let it through, so it carries no `Retry-After`",
    client: "Send a smaller request (fewer items in a batch); retrying the same one is refused again.",
    operator:
      "Nothing, when such requests are meant to be refused; else raise `limit` (the burst with gcra) or bound the cost.",
    app: `${errors}
import { rateLimit } from "@svc/ratelimit/fetch";

const limiter = rateLimit({
  limit: 100,
  windowMs: 60_000,
  clientAddressHeader: "cf-connecting-ip",
  cost: (request) => Number(new URL(request.url).searchParams.get("count") ?? 1),
});
export default { fetch: withErrors(limiter.wrap(async () => Response.json({ results: [] })), ${problemTypeBase}) };
`,
    requests: [{ path: "/export?count=500", headers: { "cf-connecting-ip": "203.0.113.7" } }],
    response: {
      headers: { "content-type": "application/problem+json; charset=utf-8" },
      body: {
        type: "https://api.example.com/problems/rate_limit_cost_exceeds_quota",
        title: "Too Many Requests",
        status: 429,
        detail:
          'This request costs 500 units; the "default" rate limit allows at most 100 at once, so it can never be accepted: send a smaller request',
        instance: "/export",
        timestamp: "…",
        code: "rate_limit_cost_exceeds_quota",
      },
    },
  },
  too_many_failed_attempts: {
    pkg: "auth",
    status: 429,
    when: "a client, or a user name, has spent its budget of failed HTTP Basic attempts (`basic.failureLimit`): the next attempt is refused before the password is checked",
    client: "Wait the seconds `Retry-After` gives before trying again, with the right password.",
    operator:
      "Nothing, when it is guessing being slowed down; a legitimate user locked out needs a larger budget or a reset of the key.",
    app: `${errors}
import { authenticate } from "@svc/auth/fetch";
import { createRateLimiter } from "@svc/ratelimit";

const verify = async (username: string, password: string) =>
  username === "ada" && password === "s3cret" ? { id: username } : undefined;
const failures = createRateLimiter({ limit: 1, windowMs: 60_000 });
const auth = authenticate({
  realm: "api",
  basic: { verify, failureLimit: { perClient: failures, perUsername: failures, clientAddress: () => "203.0.113.7" } },
});
export default { fetch: withErrors(auth.wrap(async () => Response.json({ id: 7 })), ${problemTypeBase}) };
`,
    requests: [
      { path: "/orders/7", headers: { authorization: "Basic YWRhOndyb25n" } },
      { path: "/orders/7", headers: { authorization: "Basic YWRhOndyb25n" } },
    ],
    response: {
      headers: { "content-type": "application/problem+json; charset=utf-8", "retry-after": "…" },
      body: {
        type: "https://api.example.com/problems/too_many_failed_attempts",
        title: "Too Many Requests",
        status: 429,
        detail: "Too many failed authentication attempts",
        instance: "/orders/7",
        timestamp: "…",
        code: "too_many_failed_attempts",
      },
    },
  },
  authentication_busy: {
    pkg: "auth",
    status: 503,
    when: 'HTTP Basic credentials that cannot be judged now: every verification slot (`basic.concurrency`, `basic.queue`) is taken, or the failure budgets\' limiter failed with `failureLimit.failMode: "closed"`',
    client:
      "Retry after the seconds `Retry-After` gives; the credentials were not judged, so they may well be right.",
    operator:
      'Saturated hashing: raise `basic.concurrency` (a core each) or lower the scrypt cost; a limiter failure: bring its store back (the error handler logs the cause), or choose `failMode: "open"`.',
    app: `${errors}
import { authenticate } from "@svc/auth/fetch";

// The failure budgets live in a store that is down (Redis unreachable, say): every call rejects.
const down = { consume: async () => Promise.reject(new Error("connect ECONNREFUSED 127.0.0.1:6379")) };
const verify = async (username: string, password: string) =>
  username === "ada" && password === "s3cret" ? { id: username } : undefined;
const auth = authenticate({
  realm: "api",
  basic: {
    verify,
    failureLimit: { perClient: down, perUsername: down, failMode: "closed", clientAddress: () => "203.0.113.7" },
  },
});
export default { fetch: withErrors(auth.wrap(async () => Response.json({ id: 7 })), ${problemTypeBase}) };
`,
    requests: [{ path: "/orders/7", headers: { authorization: "Basic YWRhOnMzY3JldA==" } }],
    response: {
      headers: { "content-type": "application/problem+json; charset=utf-8", "retry-after": "1" },
      body: {
        type: "https://api.example.com/problems/authentication_busy",
        title: "Service Unavailable",
        status: 503,
        detail: "The service is temporarily unavailable; try again later",
        instance: "/orders/7",
        timestamp: "…",
      },
    },
  },
  conflicting_api_version: {
    pkg: "versioning",
    status: 400,
    when: "a request that names two different versions: the path's `/v1` and `API-Version: 2`, say (the path, a version field, the content's media type)",
    client: "Name the version once, or the same version everywhere.",
    operator: "Nothing: it is the client's request.",
    app: `${pipeline}
import { versions } from "@svc/versioning";

const svc = fetchAdapter(createPipeline({ versioning: versions({ versions: [1, 2], defaultVersion: 2 }) }));
export default {
  fetch: withErrors((request) => svc.respond(request, () => reply({ id: 7 })), ${problemTypeBase}),
};
`,
    requests: [{ path: "/v1/orders/7", headers: { "api-version": "2" } }],
    response: {
      headers: {
        "content-type": "application/problem+json; charset=utf-8",
        "api-supported-versions": "1, 2",
      },
      body: {
        type: "https://api.example.com/problems/conflicting_api_version",
        title: "Bad Request",
        status: 400,
        detail: "The request names API version 1 (path /v1) and 2 (header API-Version)",
        instance: "/v1/orders/7",
        timestamp: "…",
        code: "conflicting_api_version",
      },
    },
  },
  idempotency_key_missing: {
    pkg: "idempotency",
    status: 400,
    when: "a `POST` (or `PATCH`) without `Idempotency-Key` where `idempotency()` has `required` for its path",
    client:
      "Send a new unique key (a UUID) in `Idempotency-Key` with each operation, and the same key with its retries.",
    operator: "Nothing, when keys are required; else narrow `required` to the paths that need one.",
    app: `${idempotent}
const keys = idempotency({ store: new MemoryStore(), required: true });
${idempotentApp}`,
    requests: [
      {
        method: "POST",
        path: "/orders",
        headers: { "content-type": "application/json" },
        body: '{"sku":"a"}',
      },
    ],
    response: {
      headers: { "content-type": "application/problem+json; charset=utf-8" },
      body: {
        type: "https://api.example.com/problems/idempotency_key_missing",
        title: "Bad Request",
        status: 400,
        detail: "This operation requires an Idempotency-Key header",
        instance: "/orders",
        timestamp: "…",
        code: "idempotency_key_missing",
      },
    },
  },
  idempotency_key_invalid: {
    pkg: "idempotency",
    status: 400,
    when: "an `Idempotency-Key` that is no structured-field string (RFC 8941 §3.3.3: in double quotes) of 1 to 255 characters",
    client:
      'Send a key of 1 to 255 characters as a quoted string: `Idempotency-Key: "8e03978e-40d5-43e8-bc93-6894a57f9324"`.',
    operator: "Nothing: it is the client's field.",
    app: `${idempotent}
const keys = idempotency({ store: new MemoryStore(), required: true });
${idempotentApp}`,
    requests: [
      {
        method: "POST",
        path: "/orders",
        headers: { "content-type": "application/json", "idempotency-key": '""' },
        body: '{"sku":"a"}',
      },
    ],
    response: {
      headers: { "content-type": "application/problem+json; charset=utf-8" },
      body: {
        type: "https://api.example.com/problems/idempotency_key_invalid",
        title: "Bad Request",
        status: 400,
        detail: "Idempotency-Key is empty",
        instance: "/orders",
        timestamp: "…",
        code: "idempotency_key_invalid",
      },
    },
  },
  idempotency_key_reused: {
    pkg: "idempotency",
    status: 422,
    when: "an `Idempotency-Key` sent again with a different request (another body, method or path) than the one it was first used with",
    client: "Use a new key for a new operation; send the same key only to retry the same request.",
    operator: "Nothing: the client reused a key.",
    app: `${idempotent}
const keys = idempotency({ store: new MemoryStore(), required: true });
${idempotentApp}`,
    requests: [
      {
        method: "POST",
        path: "/orders",
        headers: { "content-type": "application/json", "idempotency-key": '"order-1"' },
        body: '{"sku":"a"}',
      },
      {
        method: "POST",
        path: "/orders",
        headers: { "content-type": "application/json", "idempotency-key": '"order-1"' },
        body: '{"sku":"b"}',
      },
    ],
    response: {
      headers: { "content-type": "application/problem+json; charset=utf-8" },
      body: {
        type: "https://api.example.com/problems/idempotency_key_reused",
        title: "Unprocessable Content",
        status: 422,
        detail: "This Idempotency-Key was already used with a different request",
        instance: "/orders",
        timestamp: "…",
        code: "idempotency_key_reused",
      },
    },
  },
  idempotency_store_unavailable: {
    pkg: "idempotency",
    status: 503,
    when: "the store of `idempotency()` fails (Redis or Postgres down): without a record the operation could run twice, so it does not run",
    client: "Retry with the same key after the seconds `Retry-After` gives.",
    operator: "Bring the store back; the error handler logs its failure as the cause.",
    app: `${idempotent}
// The store is down (Redis unreachable, say): every call rejects.
const down = () => Promise.reject(new Error("connect ECONNREFUSED 127.0.0.1:6379"));
const keys = idempotency({ store: { claim: down, complete: down, release: down }, required: true });
${idempotentApp}`,
    requests: [
      {
        method: "POST",
        path: "/orders",
        headers: { "content-type": "application/json", "idempotency-key": '"order-1"' },
        body: '{"sku":"a"}',
      },
    ],
    response: {
      headers: { "content-type": "application/problem+json; charset=utf-8", "retry-after": "…" },
      body: {
        type: "https://api.example.com/problems/idempotency_store_unavailable",
        title: "Service Unavailable",
        status: 503,
        detail: "The service is temporarily unavailable; try again later",
        instance: "/orders",
        timestamp: "…",
      },
    },
  },
  rate_limit_misconfigured: {
    pkg: "ratelimit",
    status: 500,
    when: "an option function of the limiter (`key`, `cost`, `limit`, `message`) threw or answered outside its domain, or its clock answered no time: the request is neither counted nor let through",
    client: "Nothing: the server is misconfigured; report it.",
    operator:
      "Fix the function the error's message names (the error handler logs it with the cause); here `key` throws for a request without `X-Api-Key`.",
    app: `${errors}
import { rateLimit } from "@svc/ratelimit/fetch";

const limiter = rateLimit({
  limit: 100,
  windowMs: 60_000,
  key: (request) => request.headers.get("x-api-key")!.toLowerCase(), // throws without the field
});
export default { fetch: withErrors(limiter.wrap(async () => Response.json({ results: [] })), ${problemTypeBase}) };
`,
    requests: [{ path: "/search" }],
    response: {
      headers: { "content-type": "application/problem+json; charset=utf-8" },
      body: {
        type: "https://api.example.com/problems/rate_limit_misconfigured",
        title: "Internal Server Error",
        status: 500,
        detail: "An unexpected error occurred",
        instance: "/search",
        timestamp: "…",
      },
    },
  },
  rate_limit_unavailable: {
    pkg: "ratelimit",
    status: 503,
    when: 'the limiter\'s store fails (Redis down or slow) and `failMode` is `"closed"`: no request passes uncounted',
    client: "Retry after the seconds `Retry-After` gives.",
    operator:
      'Bring the store back (the `logger` says when it failed and when it answers again); `failMode: "open"` lets requests through unlimited meanwhile, `"insurance"` counts them in memory.',
    app: `${errors}
import { rateLimit } from "@svc/ratelimit/fetch";

// The store is down (Redis unreachable, say): every call rejects.
const down = () => Promise.reject(new Error("connect ECONNREFUSED 127.0.0.1:6379"));
const limiter = rateLimit({
  limit: 100,
  windowMs: 60_000,
  clientAddressHeader: "cf-connecting-ip",
  store: { consume: down, reset: down },
  failMode: "closed",
  logger: { warn: () => {} },
});
export default { fetch: withErrors(limiter.wrap(async () => Response.json({ results: [] })), ${problemTypeBase}) };
`,
    requests: [{ path: "/search", headers: { "cf-connecting-ip": "203.0.113.7" } }],
    response: {
      headers: { "content-type": "application/problem+json; charset=utf-8", "retry-after": "…" },
      body: {
        type: "https://api.example.com/problems/rate_limit_unavailable",
        title: "Service Unavailable",
        status: 503,
        detail: "The service is temporarily unavailable; try again later",
        instance: "/search",
        timestamp: "…",
      },
    },
  },
  unauthenticated_credentials: {
    pkg: "kernel",
    status: 500,
    when: "a request carrying credentials (`Authorization`) reaches a step keyed by the caller (the rate limit's default key, the `Idempotency-Key` scope) and no authentication step recorded who sent it: its caller cannot be told from any other",
    client: "Nothing: the server is misconfigured; report it.",
    operator:
      "Put `authenticate()` of `@svc/auth` before the step (or record the principal with `recordAuthentication` where your own middleware checks the credentials), or give the step a `key`/`scope` of your own.",
    app: `${errors}
import { rateLimit } from "@svc/ratelimit/fetch";

// No authenticate() in front: the limiter cannot tell whose the credentials are.
const limiter = rateLimit({ limit: 100, windowMs: 60_000, clientAddressHeader: "cf-connecting-ip" });
export default { fetch: withErrors(limiter.wrap(async () => Response.json({ results: [] })), ${problemTypeBase}) };
`,
    requests: [
      {
        path: "/search",
        headers: { "cf-connecting-ip": "203.0.113.7", authorization: "Bearer eyJhbGciOi..." },
      },
    ],
    response: {
      headers: { "content-type": "application/problem+json; charset=utf-8" },
      body: {
        type: "https://api.example.com/problems/unauthenticated_credentials",
        title: "Internal Server Error",
        status: 500,
        detail: "An unexpected error occurred",
        instance: "/search",
        timestamp: "…",
      },
    },
  },
  request_timeout: {
    pkg: "negotiate",
    status: 408,
    when: "a request body that does not arrive whole within `parseBody`'s `timeout` (a slow or stalled client)",
    client: "Send the body at once, on a connection that keeps up; retry on a new connection.",
    operator: "Raise `timeout` if slow clients with large bodies are expected on this route.",
    app: `${errors}
import { parseBody } from "@svc/negotiate/fetch";

const read = parseBody({ types: ["json"], timeout: 50 });
// A client that sends the first bytes of its body and then nothing more: the stream the server
// hands the handler never ends.
const stalled = (request: Request) =>
  new Request(request, {
    body: new ReadableStream({ start: (c) => c.enqueue(new TextEncoder().encode('{"qty":')) }),
    duplex: "half",
  } as RequestInit);
export default {
  fetch: withErrors(async (request) => Response.json(await read(stalled(request)), { status: 201 }), ${problemTypeBase}),
};
`,
    requests: [
      { method: "POST", path: "/orders", headers: { "content-type": "application/json" }, body: '{"qty":' },
    ],
    response: {
      headers: { "content-type": "application/problem+json; charset=utf-8", connection: "close" },
      body: {
        type: "https://api.example.com/problems/request_timeout",
        title: "Request Timeout",
        status: 408,
        detail: "The request body was not received within 50 ms",
        instance: "/orders",
        timestamp: "…",
        code: "request_timeout",
      },
    },
  },
  unreadable_body: {
    pkg: "negotiate",
    status: 400,
    when: "a request body whose stream fails before its end: the client went away mid-body, the connection broke",
    client: "Send the request again, whole.",
    operator: "Nothing: the client's connection failed; the error handler logs the cause.",
    app: `${errors}
import { parseBody } from "@svc/negotiate/fetch";

const read = parseBody({ types: ["json"] });
// A client that goes away after the first bytes of its body: the stream the server hands the
// handler fails.
const cut = (request: Request) =>
  new Request(request, {
    body: new ReadableStream({
      start(c) {
        c.enqueue(new TextEncoder().encode('{"qty":'));
        c.error(new Error("aborted"));
      },
    }),
    duplex: "half",
  } as RequestInit);
export default {
  fetch: withErrors(async (request) => Response.json(await read(cut(request)), { status: 201 }), ${problemTypeBase}),
};
`,
    requests: [
      { method: "POST", path: "/orders", headers: { "content-type": "application/json" }, body: '{"qty":' },
    ],
    response: {
      headers: { "content-type": "application/problem+json; charset=utf-8" },
      body: {
        type: "https://api.example.com/problems/unreadable_body",
        title: "Bad Request",
        status: 400,
        detail: "The request body could not be read",
        instance: "/orders",
        timestamp: "…",
        code: "unreadable_body",
      },
    },
  },
  missing_host: {
    pkg: "kernel",
    status: 400,
    when: "a request without `Host` (HTTP/1.0 allows one) where the service needs its own URL: a link (`hrefFor`, `baseUrl`), a redirect, a DPoP proof's `htu`",
    client: "Send `Host` (RFC 9110 §7.2: an HTTP/1.1 client always does).",
    operator: "Nothing: it is the client's request.",
    app: `${errors}
import { hrefFor } from "@svc/hal/fetch";

export default {
  fetch: withErrors(async (request) => Response.json({ _links: { self: { href: hrefFor(request, "/orders/7") } } }), ${problemTypeBase}),
};
`,
    requests: [{ path: "/orders/7" }],
    response: {
      headers: { "content-type": "application/problem+json; charset=utf-8" },
      body: {
        type: "https://api.example.com/problems/missing_host",
        title: "Bad Request",
        status: 400,
        detail: "The request has no Host header",
        instance: "/orders/7",
        timestamp: "…",
        code: "missing_host",
      },
    },
  },
  invalid_path: {
    pkg: "hal",
    status: 400,
    when: "a link (`hrefFor`) to a path holding a dot segment (`.`, `..`, also as `%2e`) or starting with `//`: a client's route parameter would make it name another resource or another origin",
    client: "Send the identifier as it is, without `.`/`..` segments or a leading `/`.",
    operator: "Nothing, when the path segment came from the client; else fix the path the app links to.",
    app: `${errors}
import { hrefFor } from "@svc/hal/fetch";

export default {
  fetch: withErrors(async (request) => {
    const id = new URL(request.url).searchParams.get("id") ?? "";
    return Response.json({ _links: { self: { href: hrefFor(request, \`/documents/\${id}\`) } } });
  }, ${problemTypeBase}),
};
`,
    requests: [{ path: "/documents?id=..", headers: { host: "api.example" } }],
    response: {
      headers: { "content-type": "application/problem+json; charset=utf-8" },
      body: {
        type: "https://api.example.com/problems/invalid_path",
        title: "Bad Request",
        status: 400,
        detail: "The link's path holds a dot segment (. or ..)",
        instance: "/documents",
        timestamp: "…",
        code: "invalid_path",
      },
    },
  },
  invalid_forwarded: {
    pkg: "kernel",
    status: 400,
    when: "a `Forwarded` field (RFC 7239) from a trusted proxy that does not parse, where the service reads the client or its own URL from it",
    client:
      "Nothing, when a proxy sets the field; a client that sets it itself must write it as RFC 7239 §4 does.",
    operator: "Check what the trusted proxy sends; a proxy that is not trusted is not read at all.",
    app: `${errors}
import { compileTrust } from "@svc/hal";
import { hrefFor } from "@svc/hal/fetch";

// The connection comes from a proxy at 10.0.0.2, trusted to say the client's URL.
const proxy = { address: "10.0.0.2" };
const trustProxy = compileTrust(["10.0.0.2"]);
export default {
  fetch: withErrors(async (request) => {
    const href = hrefFor(request, "/orders/7", { info: proxy, trustProxy, forwardedHeaders: "forwarded" });
    return Response.json({ _links: { self: { href } } });
  }, ${problemTypeBase}),
};
`,
    requests: [
      { path: "/orders/7", headers: { host: "api.example", forwarded: 'for=203.0.113.7;proto="https' } },
    ],
    response: {
      headers: { "content-type": "application/problem+json; charset=utf-8" },
      body: {
        type: "https://api.example.com/problems/invalid_forwarded",
        title: "Bad Request",
        status: 400,
        detail: "The Forwarded header is not valid",
        instance: "/orders/7",
        timestamp: "…",
        code: "invalid_forwarded",
      },
    },
  },
  invalid_dpop_proof: {
    pkg: "auth",
    status: 401,
    when: "a request with DPoP credentials (RFC 9449) whose `DPoP` proof is missing, malformed, not signed by its own key, for another method or URL, too old, or replayed",
    client:
      "Sign a new proof for each request: a JWT of type `dpop+jwt` with the request's method (`htm`) and URL (`htu`), a fresh `jti` and `iat`, and the access token's hash (`ath`), with the key the token is bound to.",
    operator:
      "When good clients are refused, compare the proof's `htu` with the URL the service sees (behind a TLS-terminating proxy, give `dpop.trustProxy`) and the clocks (`dpop.maxAge`, `dpop.clockTolerance`).",
    app: `${errors}
import { authenticate } from "@svc/auth/fetch";

const auth = authenticate({ realm: "api", bearer: ${bearer}, dpop: {} });
export default { fetch: withErrors(auth.wrap(async () => Response.json({ id: 7 })), ${problemTypeBase}) };
`,
    requests: [{ path: "/orders/7", headers: { authorization: "DPoP eyJhbGciOi...", dpop: "not.a.proof" } }],
    response: {
      headers: {
        "content-type": "application/problem+json; charset=utf-8",
        "www-authenticate":
          'DPoP realm="api", error="invalid_dpop_proof", error_description="DPoP proof is not a JWT", algs="ES256 EdDSA Ed25519 PS256 RS256"',
      },
      body: {
        type: "https://api.example.com/problems/invalid_dpop_proof",
        title: "Unauthorized",
        status: 401,
        detail: "The DPoP proof is invalid",
        instance: "/orders/7",
        timestamp: "…",
        code: "invalid_dpop_proof",
      },
    },
  },
  rate_limit_client_gone: {
    pkg: "ratelimit",
    status: 400,
    when: "on `node:http`, Express or Fastify, a client that reset its connection while an earlier step (authentication, a body parser) ran, taking its address with it: the request is refused rather than run uncounted; nobody reads the answer, the error handler logs it",
    client: "Nothing: the client is gone.",
    operator: "Nothing; many of them point at clients giving up on slow earlier steps.",
    app: `${errors}
import { IncomingMessage, ServerResponse } from "node:http";
import { Socket } from "node:net";
import { rateLimit } from "@svc/ratelimit/node";

const limit = rateLimit({ limit: 100, windowMs: 60_000 });
export default {
  fetch: withErrors(async (request) => {
    // What node:http hands the limiter once the client has reset the connection: a request on a
    // destroyed socket, whose address went with it.
    const socket = new Socket();
    socket.destroy();
    const req = new IncomingMessage(socket);
    req.method = request.method;
    req.url = new URL(request.url).pathname;
    await limit(req, new ServerResponse(req));
    return Response.json({ results: [] });
  }, ${problemTypeBase}),
};
`,
    requests: [{ path: "/search" }],
    response: {
      headers: { "content-type": "application/problem+json; charset=utf-8" },
      body: {
        type: "https://api.example.com/problems/rate_limit_client_gone",
        title: "Bad Request",
        status: 400,
        detail: "The client closed the connection before the request could be rate limited",
        instance: "/search",
        timestamp: "…",
        code: "rate_limit_client_gone",
      },
    },
  },
  idempotency_request_in_progress: {
    pkg: "idempotency",
    status: 409,
    when: "a request whose `Idempotency-Key` an earlier request with the same key still holds: its handler is running (on this instance or another sharing the store), and `waitMs` (0 by default) did not see it end",
    client:
      "Retry with the same key after the seconds `Retry-After` gives: the first attempt's answer is then replayed.",
    operator:
      "Nothing, when clients retry early; give `waitMs` for the retry to wait for the first answer instead.",
    app: `${idempotent}
const keys = idempotency({ store: new MemoryStore(), required: true });
const svc = fetchAdapter(createPipeline());
const paymentProvider = new Promise<void>(() => {}); // slow: it has not answered yet
const app = withErrors(async (request) => {
  const body: unknown = await request.json();
  return svc.respond(
    request,
    async () => {
      await paymentProvider;
      return reply({ id: 1, order: body }, { status: 201 });
    },
    { route: { idempotency: keys }, body },
  );
}, ${problemTypeBase});

// The first attempt, still waiting on the payment provider when its client gives up and retries.
const first = { method: "POST", headers: { "content-type": "application/json", "idempotency-key": '"order-1"' } };
void app(new Request("https://api.example/orders", { ...first, body: '{"sku":"a"}' }));
export default { fetch: app };
`,
    requests: [
      {
        method: "POST",
        path: "/orders",
        headers: { "content-type": "application/json", "idempotency-key": '"order-1"' },
        body: '{"sku":"a"}',
      },
    ],
    response: {
      headers: { "content-type": "application/problem+json; charset=utf-8", "retry-after": "…" },
      body: {
        type: "https://api.example.com/problems/idempotency_request_in_progress",
        title: "Conflict",
        status: 409,
        detail: "A request with this Idempotency-Key is still being processed",
        instance: "/orders",
        timestamp: "…",
        code: "idempotency_request_in_progress",
      },
    },
  },
  use_dpop_nonce: {
    pkg: "auth",
    status: 401,
    when: "a DPoP proof without the server's current nonce where `dpop.nonce` is set (RFC 9449 §9): the first request of a client, or one whose nonce has expired",
    client:
      "Sign the proof again with the `nonce` claim the response's `DPoP-Nonce` gives, and retry; keep the latest `DPoP-Nonce` of every response for the next proof.",
    operator: "Nothing: it is the nonce round trip of RFC 9449 §8, once per client and nonce lifetime.",
    app: `${errors}
import { createHash, generateKeyPairSync, randomUUID, sign } from "node:crypto";
import { authenticate } from "@svc/auth/fetch";

const auth = authenticate({
  realm: "api",
  bearer: ${bearer},
  dpop: { nonce: { secret: "a nonce secret of at least 32 bytes!" } },
});
export default { fetch: withErrors(auth.wrap(async () => Response.json({ id: 7 })), ${problemTypeBase}) };

// The client's side: a proof (RFC 9449 §4.2) for GET https://api.example/orders/7, signed with
// its own key, without a nonce (it has been given none yet).
const b64 = (value: string | Buffer) => Buffer.from(value).toString("base64url");
const { privateKey, publicKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
// The access token it holds (checked after the proof's nonce, so any will do here).
export const token = "eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJhZGEifQ.c2lnbmF0dXJl";
const header = b64(JSON.stringify({ typ: "dpop+jwt", alg: "ES256", jwk: publicKey.export({ format: "jwk" }) }));
const claims = b64(
  JSON.stringify({
    jti: randomUUID(),
    htm: "GET",
    htu: "https://api.example/orders/7",
    iat: Math.floor(Date.now() / 1000),
    ath: createHash("sha256").update(token).digest("base64url"),
  }),
);
const signature = sign("sha256", Buffer.from(\`\${header}.\${claims}\`), { key: privateKey, dsaEncoding: "ieee-p1363" });
export const proof = \`\${header}.\${claims}.\${b64(signature)}\`;
`,
    requests: [
      { path: "/orders/7", headers: { host: "api.example", authorization: "DPoP {token}", dpop: "{proof}" } },
    ],
    response: {
      headers: {
        "content-type": "application/problem+json; charset=utf-8",
        "www-authenticate":
          'DPoP realm="api", error="use_dpop_nonce", error_description="Resource server requires nonce in DPoP proof", algs="ES256 EdDSA Ed25519 PS256 RS256"',
        "dpop-nonce": "…",
      },
      body: {
        type: "https://api.example.com/problems/use_dpop_nonce",
        title: "Unauthorized",
        status: 401,
        detail: "A DPoP nonce is required",
        instance: "/orders/7",
        timestamp: "…",
        code: "use_dpop_nonce",
      },
    },
  },
};
