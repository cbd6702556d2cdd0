import { type AuthenticateOptions, createPasswordHasher } from "@svc/auth";
import { validators } from "@svc/conditional";
import { hal, halJson, isPage, pageItems, pageModel, parsePageRequest, type QueryInput } from "@svc/hal";
import { MemoryStore } from "@svc/idempotency";
import { type ApiVersion, createPipeline, HttpError, type RequestState, reply } from "@svc/kernel";
import { compression, csv, json, type Representation, representations, xml } from "@svc/negotiate";
import { versions } from "@svc/versioning";

/**
 * What every framework's composition shares: the options each package is given, the data, and
 * the handlers as functions of plain values. The compositions (`express.ts`, `node.ts`,
 * `fastify.ts`, `hono.ts`) only mount these the way each package's README teaches on that
 * framework; none of them decides anything of its own.
 */

/** The proxies in front, by address: the forwarded fields of these peers are read. */
export const TRUST = "loopback";

/** Hosts the service answers for (`@svc/hal`'s host check). */
export const HOSTS = ["api.example", "public.example"];

export const CORS = {
  origins: ["https://app.example"],
  exposedHeaders: ["ETag", "Location"],
  maxAge: 600,
};

/** Requests per client address and minute, in front of authentication. */
export const CLIENT_LIMIT = 4;
export const LIMIT = {
  key: "client",
  limit: CLIENT_LIMIT,
  windowMs: 60_000,
  policyName: "client",
} as const;

export const BODY = { limit: 512, others: "refuse" } as const;

export const SOAP_PATH = "/ws/customer";

/**
 * The methods of each route, for the compositions that list them (`allowedMethods`); Fastify's
 * `errorPlugin` asks its router instead.
 */
export const COLLECTION_METHODS = ["GET", "HEAD", "POST"];
export const ITEM_METHODS = ["GET", "HEAD", "PUT"];
export const ORDER_METHODS = ["POST"];
export const ME_METHODS = ["GET", "HEAD"];
export const WHOAMI_METHODS = ["GET", "HEAD"];

/**
 * The public key tenant A's Bearer tokens are verified with (ES256, as a JWK): an issuer's `key`,
 * the form that must work where Node.js's `KeyObject` does not (workerd). Its private half signs
 * the table's tokens (`test/rows.ts`); a key pair for these tests alone.
 */
export const PUBLIC_JWK = {
  kty: "EC",
  crv: "P-256",
  x: "9NuQ50NT7aSfRRkE-_drQ1MoA_Z3pd6IstGi3ImBo80",
  y: "anWn2vTsuQxhTBrOu8xXXdoza2MKZhvw05ImeVmJHog",
};

/** Tenant B's key: another authorization server, which mints its own `sub` values. */
export const PUBLIC_JWK_B = {
  kty: "EC",
  crv: "P-256",
  x: "nhpX9y875T9YsxwGLg3DPd6iExW_b4GzbsugU_OCPv8",
  y: "RFseWRp8KhkvSijnhdf4uC590NRCpQ42xGIxTvd3oIU",
};

/** The two issuers the API trusts (`bearer.issuers`): two tenants, each with its own users. */
export const ISSUER_A = "https://a.auth.example/";
export const ISSUER_B = "https://b.auth.example/";

/** Requests per principal and minute on `GET /me`, after authentication (the limiter's default key). */
export const PRINCIPAL_LIMIT = { limit: 2, windowMs: 60_000, policyName: "principal" } as const;

const passwords = createPasswordHasher({ logN: 4, r: 1 });
// Hashed on first use: a hash draws a random salt, which a Worker may not do at global scope.
let hashed: Promise<Map<string, { hash: string; scopes: string[] }>> | undefined;
const users = () =>
  (hashed ??= (async () =>
    new Map([
      ["alice", { hash: await passwords.hash("alice-pw"), scopes: ["employees:read", "employees:write"] }],
      ["bob", { hash: await passwords.hash("bob-pw"), scopes: [] as string[] }],
    ]))());

export function authOptions(): AuthenticateOptions {
  return {
    realm: "api",
    // Anonymous requests go on (to the routes' guards); credentials sent are checked.
    optional: true,
    bearer: {
      algorithms: ["ES256"],
      issuers: [
        { issuer: ISSUER_A, key: PUBLIC_JWK },
        { issuer: ISSUER_B, key: PUBLIC_JWK_B },
      ],
    },
    basic: {
      verify: async (user, password) => {
        const found = (await users()).get(user);
        if (!(await passwords.verify(password, found?.hash)) || found === undefined) return null;
        return { id: user, scopes: found.scopes };
      },
    },
  };
}

export const READ_SCOPE = "employees:read";

interface Employee {
  id: number;
  name: string;
}

/** A page of the collection as CSV, one row per item: a representation only a page can take. */
const pageCsv: Representation = {
  mediaType: "text/csv",
  canRepresent: isPage,
  serialize: (data, context) => csv.serialize(pageItems(data), context),
};

/** One service's state and handlers: each framework's server gets its own. */
export function createService() {
  const employees = new Map<number, Employee>(
    ["Ada", "Grace", "Edsger", "Barbara", "Donald"].map((name, i) => [i + 1, { id: i + 1, name }]),
  );
  let orders = 0;

  const pipeline = createPipeline({
    versioning: versions({
      versions: [1, 2],
      defaultVersion: 2,
      mediaType: { vendor: "svc" },
      deprecated: { 1: { deprecation: "2026-01-01T00:00:00Z", sunset: "2027-01-01T00:00:00Z" } },
    }),
    representations: representations({ offers: [json, halJson, xml, pageCsv] }),
    coding: compression({ threshold: 256 }),
    validators: validators({ required: true }),
  });

  const find = (id: string): Employee | undefined =>
    /^\d{1,6}$/.test(id) ? employees.get(Number(id)) : undefined;
  const resource = (employee: Employee, self: string, version: ApiVersion | undefined) =>
    hal({ ...employee, version: version ?? null }).link("self", self);

  return {
    pipeline,
    // Required on the route as routed: `/v1/orders` is `/orders`.
    idempotencyOptions: { store: new MemoryStore(), required: ["/orders"], waitMs: 0 },
    /** `GET /employees`: a page of the collection. `url`: the request-target as received. */
    list(query: QueryInput, url: string, origin: string) {
      const { page, size } = parsePageRequest(query, { defaultSize: 2, maxSize: 10 });
      const all = [...employees.values()];
      return pageModel({
        collection: "employees",
        items: all.slice((page - 1) * size, page * size),
        page,
        size,
        totalElements: all.length,
        url,
        origin,
      });
    },

    /** `GET /employees/:id`. `self`: the employee's link as the framework's entry builds it. */
    one(id: string, self: string, version: ApiVersion | undefined) {
      const employee = find(id);
      if (employee === undefined) throw HttpError.notFound(`Employee ${id} does not exist`);
      return resource(employee, self, version);
    },

    /** The current representation of `id`, for a write's preconditions; undefined: none. */
    current(id: string, self: string, version: ApiVersion | undefined) {
      const employee = find(id);
      return employee === undefined ? undefined : { data: resource(employee, self, version) };
    },

    /** `PUT /employees/:id`, after its preconditions. */
    update(id: string, body: unknown, self: string, version: ApiVersion | undefined) {
      const employee = find(id);
      if (employee === undefined) throw HttpError.notFound(`Employee ${id} does not exist`);
      const name = nameOf(body);
      if (typeof name !== "string" || name === "") throw HttpError.badRequest("name: a non-empty string");
      employee.name = name;
      return resource(employee, self, version);
    },

    /** `POST /employees`. */
    create(body: unknown, by: string | undefined) {
      const name = nameOf(body);
      if (typeof name !== "string" || name === "") throw HttpError.badRequest("name: a non-empty string");
      const id = employees.size + 1;
      employees.set(id, { id, name });
      return reply({ id, name, by: by ?? null }, { status: 201, headers: { Location: `/employees/${id}` } });
    },

    /** `POST /orders`, behind a required `Idempotency-Key`: runs once per key and principal. */
    order(body: unknown, by: string | undefined) {
      orders += 1;
      return reply(
        { order: orders, by: by ?? null, item: (body as { item?: unknown })?.item ?? null },
        { status: 201 },
      );
    },

    /** `GET /me`, behind `requireScopes(READ_SCOPE)`: who, and which issuer vouches for them. */
    me(principal: { id: string; issuer?: string | undefined } | undefined) {
      return { id: principal?.id ?? null, issuer: principal?.issuer ?? null };
    },

    /**
     * `GET /whoami`: what the packages decided about the request, as its handler reads it on every
     * framework (`requestState(request)` of `@svc/kernel`): the principal's key, the version, the
     * route as routed and its template.
     */
    whoami(state: RequestState) {
      const { principalKey, version, route } = state;
      return {
        principalKey: principalKey ?? null,
        version: version ?? null,
        path: route.path,
        template: route.template ?? null,
      };
    },
  };
}

export type Service = ReturnType<typeof createService>;

/** `{ name }` as JSON sends it, or `<employee><name>` as XML does (`{ employee: { name } }`). */
function nameOf(body: unknown): unknown {
  const value = body as { name?: unknown; employee?: { name?: unknown } } | undefined;
  return value?.name ?? value?.employee?.name;
}
