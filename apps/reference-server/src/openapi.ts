import { authOpenApi } from "@svc/auth";
import { conditionalOpenApi } from "@svc/conditional";
import { errorsOpenApi } from "@svc/errors";
import { halResourceSchema as halItem, halOpenApi, halPageSchema as halPage } from "@svc/hal";
import { idempotencyOpenApi } from "@svc/idempotency";
import { composeOpenApi, type OpenApiFragment, type OpenApiOperationContext } from "@svc/kernel";
import { negotiateOpenApi } from "@svc/negotiate";
import { rateLimitOpenApi } from "@svc/ratelimit";
import { versioningOpenApi } from "@svc/versioning";
import { z } from "zod";
import { VERSIONING } from "./pipeline.js";
import type { CrudResource, Ctx } from "./routes/crud.js";
import { OrderPatch, REQUEST_SCHEMAS } from "./schemas.js";

type Json = Record<string, unknown>;

/*
 * The OpenAPI 3.1 document of the resource API. Request bodies are generated from the zod schemas
 * the server validates with (so they cannot drift); responses are described here, and what the
 * composed packages answer with comes from their own fragments, given the options the server gives
 * them (spec parts 2, 4, 5, 7, 8 and 9; see `fragments`). The test
 * suites check every response they receive against this document (test/openapi-check.ts).
 */

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const response = (name: string) => ({ $ref: `#/components/responses/${name}` });
const header = (name: string) => ({ $ref: `#/components/headers/${name}` });

/** `/employees/:parentId/reviews` → `/employees/{parentId}/reviews` */
const oas = (path: string) => path.replace(/:(\w+)/g, "{$1}");
const capital = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

// ---------------------------------------------------------------------------------------------
// Request bodies, generated from the zod schemas
// ---------------------------------------------------------------------------------------------

/**
 * The request schemas of the document. A POST and a PUT send every field, a PATCH any non-empty
 * subset of them (the server validates `schema.partial()` and refuses an empty one). None of them
 * documents `id`: the path names the resource, and a body id is only tolerated when it repeats
 * the path's (as a representation read by GET does); any other is a 400 that no schema can tell
 * from a valid request, since a schema cannot refer to the path.
 */
function requestSchemas(): { schemas: Record<string, Json>; bodies: Map<z.ZodObject, RequestBodies> } {
  const registry = z.registry<{ id: string }>();
  const bodies = new Map<z.ZodObject, RequestBodies>();
  for (const [name, schema] of Object.entries(REQUEST_SCHEMAS) as Array<[string, z.ZodObject]>) {
    if (schema === OrderPatch) {
      // Validated whole by the order's own PATCH handler (a state transition).
      registry.add(schema, { id: name });
      bodies.set(schema, { create: name, replace: name, patch: name });
      continue;
    }
    const base = name.replace(/Input$/, "");
    const writable = "id" in schema.shape ? schema.omit({ id: true }) : schema;
    registry.add(writable, { id: name });
    registry.add(writable.partial(), { id: `${base}Patch` });
    bodies.set(schema, { create: name, replace: name, patch: `${base}Patch` });
  }
  const generated = z.toJSONSchema(registry, {
    target: "draft-2020-12",
    io: "input",
    unrepresentable: "any",
    uri: (id) => `#/components/schemas/${id}`,
  }) as { schemas: Record<string, Json> };
  const schemas: Record<string, Json> = {};
  for (const [name, s] of Object.entries(generated.schemas)) {
    // A fragment in `$id` is not allowed (JSON Schema 2020-12 §8.2.1); the component's place in
    // the document already names it.
    const { $schema: _schema, $id: _id, ...rest } = s;
    schemas[name] = tidy(
      name.endsWith("Patch") && name !== "OrderPatch" ? { ...rest, minProperties: 1 } : rest,
    );
  }
  return { schemas, bodies };
}

/**
 * A business minimum (`exclusiveMinimum: 0` from the schema's metadata) next to the type's range
 * (`minimum: -10^12`) keeps only the stricter bound, as linters ask.
 */
function tidy(schema: Json): Json {
  const out: Json = {};
  for (const [key, value] of Object.entries(schema)) {
    out[key] = Array.isArray(value)
      ? value.map((v) => (v && typeof v === "object" ? tidy(v as Json) : v))
      : value && typeof value === "object"
        ? tidy(value as Json)
        : value;
  }
  if (typeof out.minimum === "number" && typeof out.exclusiveMinimum === "number") {
    if (out.exclusiveMinimum >= out.minimum) delete out.minimum;
    else delete out.exclusiveMinimum;
  }
  return out;
}

/** Drops the generated request schemas no operation uses (a PATCH schema of a POST-only collection). */
function prune(schemas: Record<string, Json>, used: unknown, generated: readonly string[]): void {
  const refsIn = (value: unknown) =>
    new Set([...JSON.stringify(value).matchAll(/#\/components\/schemas\/(\w+)/g)].map((m) => m[1] as string));
  const live = refsIn(used);
  for (;;) {
    const before = live.size;
    for (const name of [...live]) for (const r of refsIn(schemas[name] ?? {})) live.add(r);
    if (live.size === before) break;
  }
  for (const name of generated) if (!live.has(name)) delete schemas[name];
}

interface RequestBodies {
  create: string;
  replace: string;
  patch: string;
}

const jsonBody = (schema: Json, description?: string) => ({
  required: true,
  ...(description ? { description } : {}),
  content: { "application/json": { schema } },
});

// ---------------------------------------------------------------------------------------------
// Representations
// ---------------------------------------------------------------------------------------------

const int = { type: "integer" } as const;
const num = { type: "number" } as const;
const str = { type: "string" } as const;
const dateTime = { type: "string", format: "date-time" } as const;
const nullable = (type: "string" | "integer" | "number") => ({ type: [type, "null"] });

const employeeState = {
  email: { type: "string", format: "email" },
  department: str,
  city: str,
  salary: num,
  managerId: nullable("integer"),
};
const employeeLinks = ["update", "delete", "department", "projects"];

/** The item representation of every collection, by the schema name it has in the document. */
const ITEMS: Record<string, Json> = {
  Employee: halItem(
    "An employee, version 1: one `name`",
    { id: int, name: str, ...employeeState },
    employeeLinks,
    ["manager"],
  ),
  EmployeeV2: halItem(
    "An employee, version 2: `firstName` and `lastName`",
    { id: int, firstName: str, lastName: str, ...employeeState },
    employeeLinks,
    ["manager"],
  ),
  EmployeeProject: halItem(
    "A project an employee works on, with the employee's role in it",
    { id: int, name: str, department: str, status: { enum: ["ACTIVE", "DONE"] }, role: str },
    ["department"],
  ),
  Department: halItem("A department", { id: int, name: str, city: str }, ["employees"]),
  Project: halItem(
    "A project",
    { id: int, name: str, department: str, budget: num, status: { enum: ["ACTIVE", "DONE"] } },
    ["department"],
  ),
  Category: halItem("A product category", { id: int, name: str, description: str }, ["products"]),
  Product: halItem(
    "A product",
    { id: int, name: str, sku: str, categoryId: int, category: str, price: num, stock: int },
    ["category", "reviews"],
  ),
  Review: halItem(
    "A review of a product",
    {
      id: int,
      productId: int,
      author: str,
      rating: { type: "integer", minimum: 1, maximum: 5 },
      comment: str,
      createdAt: dateTime,
    },
    ["product"],
  ),
  Customer: halItem(
    "A customer",
    { id: int, name: str, email: { type: "string", format: "email" }, city: str },
    ["orders"],
  ),
  User: halItem(
    "A user account",
    {
      id: int,
      username: str,
      email: { type: "string", format: "email" },
      role: { enum: ["admin", "customer"] },
      customerId: nullable("integer"),
    },
    ["orders"],
    ["customer"],
  ),
  Order: halItem(
    "An order; its links follow its state: PENDING → `cancel`; PAID → `payment`, `invoice`, `cancel`; SHIPPED → `tracking`, `invoice`",
    {
      id: int,
      status: { enum: ["PENDING", "PAID", "SHIPPED", "CANCELLED"] },
      customerId: int,
      total: num,
      currency: str,
      createdAt: dateTime,
      updatedAt: dateTime,
    },
    ["customer", "items"],
    ["payment", "invoice", "cancel", "tracking"],
  ),
  OrderItem: halItem(
    "A line of an order",
    { id: int, orderId: int, productId: int, productName: str, sku: str, quantity: int, unitPrice: num },
    ["order", "product"],
  ),
  Payment: halItem(
    "The payment of an order",
    { id: int, orderId: int, amount: num, method: { enum: ["card", "sepa", "paypal"] }, createdAt: dateTime },
    ["order"],
  ),
  Account: halItem(
    "An account; its balance moves only through transfers",
    { id: int, number: str, owner: str, balance: num, currency: str, updatedAt: dateTime },
    [],
  ),
  Transfer: halItem(
    "A transfer between two accounts, executed after it was accepted: its status tells the outcome",
    {
      id: int,
      fromAccountId: int,
      toAccountId: int,
      amount: num,
      currency: { type: "string", description: "ISO 4217 code of both accounts" },
      status: { enum: ["PENDING", "PROCESSING", "COMPLETED", "FAILED"] },
      failureReason: nullable("string"),
      createdAt: dateTime,
      completedAt: { anyOf: [dateTime, { type: "null" }] },
    },
    ["from", "to"],
  ),
  Event: halItem(
    "An event logged through the SOAP customer service's one-way `logEvent`",
    {
      id: int,
      type: str,
      severity: str,
      message: str,
      occurredAt: nullable("string"),
      customerId: { type: ["string", "null"], description: "An xs:long as a string: no digit is lost" },
      receivedAt: dateTime,
      submittedBy: str,
    },
    [],
  ),
  Notification: halItem(
    "A notification queued through the SOAP customer service's one-way `sendNotification`",
    { id: int, message: str, status: str, queuedAt: dateTime, submittedBy: str },
    [],
  ),
};

/** The item schema of each collection path. */
const ITEM_OF: Record<string, string> = {
  "/employees": "Employee",
  "/employees/:parentId/projects": "EmployeeProject",
  "/departments": "Department",
  "/projects": "Project",
  "/categories": "Category",
  "/products": "Product",
  "/products/:parentId/reviews": "Review",
  "/customers": "Customer",
  "/customers/:parentId/orders": "Order",
  "/users": "User",
  "/users/:parentId/orders": "Order",
  "/orders": "Order",
  "/orders/:parentId/items": "OrderItem",
  "/payments": "Payment",
  "/accounts": "Account",
  "/transfers": "Transfer",
  "/events": "Event",
  "/notifications": "Notification",
};

/** Schemas shared by every operation: links, pages, the error record and the documents. */
function commonSchemas(): Record<string, Json> {
  return {
    ...readinessSchemas(),
    ...documentSchemas(),
    ...orderDocumentSchemas(),
    ...operationalSchemas(),
  };
}

/** The readiness failure: the error record plus the state of each dependency. */
function readinessSchemas(): Record<string, Json> {
  return {
    ReadinessFailure: {
      type: "object",
      description: "The error record plus the state of each dependency",
      required: ["timestamp", "status", "error", "message", "path", "checks"],
      properties: {
        timestamp: dateTime,
        status: { const: 503 },
        error: str,
        message: str,
        path: str,
        checks: ref("DependencyChecks"),
      },
      additionalProperties: false,
    },
  };
}

/** The entry point and the cart. */
function documentSchemas(): Record<string, Json> {
  return {
    Root: {
      type: "object",
      description: "The entry point: a link to every top-level collection and to the cart",
      required: ["name", "docs", "_links"],
      properties: {
        name: str,
        docs: str,
        _links: {
          type: "object",
          required: ["self", "cart"],
          properties: { self: ref("HalLink"), cart: ref("HalLink") },
          additionalProperties: ref("HalLink"),
        },
      },
      additionalProperties: false,
    },
    Cart: halItem(
      "The caller's cart (one per user, no server session)",
      { owner: str, items: { type: "array", items: ref("CartLine") }, total: num, currency: str },
      [],
    ),
    CartLine: halItem(
      "A line of the caller's cart: one product (at most one line each) and its quantity",
      { productId: int, name: str, quantity: int, unitPrice: num },
      ["product"],
    ),
  };
}

/** The documents of an order: its tracking and its invoice. */
function orderDocumentSchemas(): Record<string, Json> {
  return {
    Tracking: halItem(
      "Tracking of a shipped order",
      { orderId: int, carrier: nullable("string"), trackingNumber: nullable("string"), shippedAt: dateTime },
      ["order"],
    ),
    Invoice: halItem(
      "The invoice of a paid or shipped order",
      {
        invoiceNumber: str,
        orderId: int,
        status: { enum: ["PAID", "SHIPPED"] },
        customer: {
          anyOf: [
            {
              type: "object",
              required: ["id", "name", "email", "city"],
              properties: { id: int, name: str, email: str, city: str },
              additionalProperties: false,
            },
            { type: "null" },
          ],
        },
        lines: {
          type: "array",
          items: {
            type: "object",
            required: ["product", "sku", "quantity", "unitPrice", "amount"],
            properties: { product: str, sku: str, quantity: int, unitPrice: num, amount: num },
            additionalProperties: false,
          },
        },
        total: num,
        currency: str,
        issuedAt: dateTime,
      },
      ["order"],
    ),
  };
}

/** Tokens, keys, health, readiness and this document. */
function operationalSchemas(): Record<string, Json> {
  return {
    Token: {
      type: "object",
      description: "An OAuth 2.0 access token response (RFC 6749 §5.1)",
      required: ["access_token", "token_type", "expires_in"],
      properties: {
        access_token: { type: "string", description: "An ES256-signed JWT" },
        token_type: { const: "Bearer" },
        expires_in: { type: "integer", description: "Seconds" },
      },
      additionalProperties: false,
    },
    Jwks: {
      type: "object",
      description: "A JSON Web Key Set (RFC 7517 §5)",
      required: ["keys"],
      properties: {
        keys: {
          type: "array",
          items: {
            type: "object",
            required: ["kty"],
            properties: { kty: str, kid: str, alg: str, use: str },
          },
        },
      },
    },
    Health: {
      type: "object",
      required: ["status"],
      properties: { status: { const: "UP" } },
      additionalProperties: false,
    },
    DependencyChecks: {
      type: "object",
      required: ["database", "redis"],
      properties: {
        database: { enum: ["UP", "DOWN"] },
        redis: { enum: ["UP", "DOWN", "not used"] },
      },
      additionalProperties: false,
    },
    Readiness: {
      type: "object",
      required: ["status", "checks"],
      properties: { status: { const: "UP" }, checks: ref("DependencyChecks") },
      additionalProperties: false,
    },
    OpenApiDocument: {
      type: "object",
      description: "This document",
      required: ["openapi", "info", "paths"],
      properties: { openapi: str, info: { type: "object" }, paths: { type: "object" } },
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Responses
// ---------------------------------------------------------------------------------------------

/**
 * A schema as the XML representation names its root element (OpenAPI 3.1 §4.8.26, XML Object):
 * without `xml.name` a client generated from the document expects the component's name
 * (`<Employee>`, `<ErrorRecord>`), while @svc/negotiate writes `<resource>` and @svc/errors
 * `<error>` or RFC 9457 Appendix B's `<problem>`.
 */
const xmlRoot = (schema: Json, xml: Json): Json => ({ allOf: [schema], xml });
const XML_RESOURCE = { name: "resource" };

/** Every error is the error record: JSON by default, XML or RFC 9457 problem details by Accept. */
const ERRORS = errorsOpenApi();
const ERROR_CONTENT = ERRORS.errorContent as Json;
const CORRELATION = { "X-Correlation-ID": header("CorrelationId") };
const errorResponse = (description: string, headers: Json = {}) => ({
  description,
  headers: { ...CORRELATION, ...headers },
  content: ERROR_CONTENT,
});

/**
 * The refusals of this service's own: the statuses the packages answer with are described by
 * their fragments (see {@link fragments}).
 */
const RESPONSES: Record<string, Json> = {
  BadRequest: errorResponse(
    "Invalid request: a bad query parameter, a malformed or invalid body (with `errors` per field), a malformed `Authorization`, `API-Version` or `Idempotency-Key`",
  ),
  NotFound: errorResponse("No such resource (or no such parent of a nested collection)"),
  RequestTimeout: errorResponse("The request was not received in time"),
  Conflict: errorResponse(
    "A unique value is taken, the resource is still referenced, the state forbids it, or a request with the same Idempotency-Key is still in flight (with `Retry-After`)",
    { "Retry-After": header("RetryAfter") },
  ),
  MisdirectedRequest: errorResponse("The service does not answer for the host the request names"),
  Unprocessable: errorResponse(
    "A business rule is broken (with `errors` per field), or an Idempotency-Key is reused with another payload",
  ),
  ServiceUnavailable: errorResponse(
    "Temporarily unavailable (database, rate-limit or idempotency store down, or shutting down)",
    { "Retry-After": header("RetryAfter") },
  ),
};

const HEADERS: Record<string, Json> = {
  CorrelationId: {
    description: "The request's `X-Correlation-ID` when it is a sane token, else a generated UUID",
    schema: { type: "string" },
  },
  Location: {
    description: "The URI of the created (or accepted) resource",
    schema: { type: "string", format: "uri" },
  },
  RetryAfter: { description: "Seconds to wait before retrying", schema: { type: "integer", minimum: 0 } },
};

/** The statuses every operation can answer, whatever it does; the packages' fragments add theirs. */
const ANY = {
  "400": response("BadRequest"),
  "408": response("RequestTimeout"),
  "421": response("MisdirectedRequest"),
  "503": response("ServiceUnavailable"),
};

/**
 * The representations of a resource (spec part 3): JSON, HAL+JSON, XML, text and HTML, and the
 * vendor types that also select the API version (`application/vnd.svc.v2+json`, `…+xml`, spec
 * part 9), which the response carries as its Content-Type.
 */
function representations(schema: Json, extra: Json = {}): Json {
  const inXml = xmlRoot(schema, XML_RESOURCE);
  return {
    "application/json": { schema },
    "application/hal+json": { schema },
    "application/xml": { schema: inXml },
    "text/plain": { schema: { type: "string" } },
    "text/html": { schema: { type: "string" } },
    "application/vnd.svc.v1+json": { schema },
    "application/vnd.svc.v2+json": { schema },
    "application/vnd.svc.v1+xml": { schema: inXml },
    "application/vnd.svc.v2+xml": { schema: inXml },
    ...extra,
  };
}

/**
 * Every array as the XML representations write it: one wrapping element named after the member,
 * each entry an `<item>` (@svc/negotiate), or an `<error>` in the error record's `errors`
 * (@svc/errors). Without `xml.wrapped`, OpenAPI 3.1 §4.8.26 describes an array as one element per
 * entry named after the member, no wrapper. JSON ignores the XML Object.
 */
function describeXmlArrays(node: unknown, itemName = "item"): void {
  if (Array.isArray(node)) {
    for (const n of node) describeXmlArrays(n, itemName);
    return;
  }
  if (node === null || typeof node !== "object") return;
  const schema = node as Json;
  if (schema.type === "array" && schema.items && typeof schema.items === "object") {
    schema.xml = { wrapped: true };
    (schema.items as Json).xml = { name: itemName };
  }
  for (const [key, value] of Object.entries(schema)) {
    if (key === "examples" || key === "example") continue;
    describeXmlArrays(value, itemName);
  }
}
const ok = (description: string, schema: Json, extra: Json = {}) => ({
  description,
  headers: { ETag: header("ETag"), ...CORRELATION },
  content: representations(schema, extra),
});
const created = (description: string, schema: Json, extra: Json = {}) => ({
  description,
  headers: { Location: header("Location"), ETag: header("ETag"), ...CORRELATION },
  content: representations(schema, extra),
});
const noContent = (description: string) => ({ description, headers: CORRELATION });

// ---------------------------------------------------------------------------------------------
// Parameters
// ---------------------------------------------------------------------------------------------

/** Ids are signed 64-bit (`int64` bounds them to 2^63 − 1, which a JSON number cannot spell exactly). */
const ID_SCHEMA = { type: "integer", format: "int64", minimum: 1 };
const idParameter = (name: string, noun: string) => ({
  name,
  in: "path",
  required: true,
  description: `The ${noun.toLowerCase()}'s id, 1 to 9223372036854775807 (more digits are a 400, any other path segment a 404)`,
  schema: ID_SCHEMA,
});
function pathParams(r: CrudResource): Json[] {
  return r.parent ? [idParameter("parentId", r.parent.noun)] : [];
}

/** Page, size, sort and the filters of a collection, as `parseListQuery` reads them (spec 4.1 rule 9). */
function listParams(r: CrudResource): Json[] {
  const sortFields = Object.keys(r.list.sort);
  return [
    { $ref: "#/components/parameters/Page" },
    { $ref: "#/components/parameters/Size" },
    {
      name: "sort",
      in: "query",
      description: "`<field>`, `<field>,asc` or `<field>,desc`",
      schema: {
        type: "string",
        enum: sortFields.flatMap((f) => [f, `${f},asc`, `${f},desc`]),
      },
    },
    ...Object.entries(r.list.filters).map(([f, spec]) => ({
      name: f,
      in: "query",
      description:
        spec.match === "contains"
          ? "Case-insensitive substring, 1 to 200 characters, no NUL"
          : spec.match === "int"
            ? "Exact match"
            : spec.match === "id"
              ? "Exact match, an id from 0 to 9223372036854775807 (more is a 400)"
              : "Exact match, 1 to 200 characters, no NUL",
      schema:
        spec.match === "int"
          ? { type: "integer", minimum: 0, maximum: 999_999_999 }
          : spec.match === "id"
            ? // Up to 2^63 − 1, as path ids (a JSON number cannot hold that bound exactly).
              { type: "integer", format: "int64", minimum: 0 }
            : // PostgreSQL text cannot hold NUL: the server refuses it with a 400.
              { type: "string", minLength: 1, maxLength: 200, pattern: NO_NUL },
    })),
  ];
}

/** Any text without U+0000 (`pattern` of JSON Schema is an ECMA-262 expression, unanchored). */
const NO_NUL = "^[^\\u0000]*$";

const PARAMETERS: Record<string, Json> = {
  Page: {
    name: "page",
    in: "query",
    description: "1-based page number",
    schema: { type: "integer", minimum: 1, maximum: 999_999_999, default: 1 },
  },
  Size: {
    name: "size",
    in: "query",
    description: "Items per page",
    schema: { type: "integer", minimum: 1, maximum: 100, default: 20 },
  },
};

// ---------------------------------------------------------------------------------------------
// Operations of the collections
// ---------------------------------------------------------------------------------------------

/** How one collection appears: under `/v2` its employees are version 2. */
interface Variant {
  prefix: "" | "/v2";
  /** Item schema of GET responses. */
  item: Json;
  /** Page schema of GET responses. */
  page: Json;
  /** Request body schemas by write. */
  bodies: { create: Json; replace: Json; patch: Json } | undefined;
  /** Operation id suffix. */
  suffix: string;
  /** Extra parameters of every operation. */
  params: Json[];
  /** The vendor media types (`application/vnd.svc.v2+json`) of items and pages. */
  media: { item: Json; page: Json };
}

const NO_MEDIA = { item: {}, page: {} };
/** `Accept: application/vnd.svc.v<N>+json` selects the version and is the Content-Type answered. */
function vendor(versions: Record<string, [Json, Json]>): { item: Json; page: Json } {
  const type = (n: string) => `application/vnd.svc.v${n}+json`;
  const entries = Object.entries(versions);
  return {
    item: Object.fromEntries(entries.map(([n, [item]]) => [type(n), { schema: item }])),
    page: Object.fromEntries(entries.map(([n, [, page]]) => [type(n), { schema: page }])),
  };
}

function writesOf(r: CrudResource): ReadonlyArray<"POST" | "PUT" | "PATCH" | "DELETE"> {
  return r.writes ?? (r.input ? ["POST", "PUT", "PATCH", "DELETE"] : []);
}

/** The request schema a resource validates writes with (the one for version 1 requests). */
function inputOf(r: CrudResource): z.ZodObject | undefined {
  if (r.input) return r.input({ req: { state: { version: 1 } } } as Ctx);
  if (r.path === "/orders") return REQUEST_SCHEMAS.OrderInput;
  if (r.path === "/payments") return REQUEST_SCHEMAS.PaymentInput;
  if (r.path === "/transfers") return REQUEST_SCHEMAS.TransferInput;
  return undefined;
}

function variantsOf(r: CrudResource, bodies: Map<z.ZodObject, RequestBodies>): Variant[] {
  const itemName = ITEM_OF[r.path];
  if (!itemName) throw new Error(`openapi: no representation is described for ${r.path}`);
  const input = inputOf(r);
  const names = input ? bodies.get(input) : undefined;
  const refs = (n: RequestBodies | undefined) =>
    n ? { create: ref(n.create), replace: ref(n.replace), patch: ref(n.patch) } : undefined;
  const bodyRefs = refs(names);
  if (r.path === "/orders" && bodyRefs) bodyRefs.patch = ref("OrderPatch");
  const item = ref(itemName);
  const page = ref(`${itemName}Page`);
  const plain = { item, page, bodies: bodyRefs, suffix: "", params: [] };
  if (!r.path.startsWith("/employees")) return [{ prefix: "", ...plain, media: NO_MEDIA }];
  if (r.path !== "/employees") {
    // The projects of an employee look the same in both versions.
    return [
      { prefix: "", ...plain, media: vendor({ "1": [item, page], "2": [item, page] }) },
      { prefix: "/v2", ...plain, suffix: "V2", media: vendor({ "2": [item, page] }) },
    ];
  }
  const v2 = refs(bodies.get(REQUEST_SCHEMAS.EmployeeV2Input));
  const either = (a: Json | undefined, b: Json | undefined) => ({ anyOf: [a, b] });
  const versions = {
    "1": [ref("Employee"), ref("EmployeePage")] as [Json, Json],
    "2": [ref("EmployeeV2"), ref("EmployeeV2Page")] as [Json, Json],
  };
  return [
    {
      prefix: "",
      item: either(ref("Employee"), ref("EmployeeV2")),
      page: either(ref("EmployeePage"), ref("EmployeeV2Page")),
      // The body's version follows `API-Version` (or the vendor type), which a schema cannot
      // make a body depend on: the writes here are described with version 1, the version
      // they take without one, and version 2's are those of `/v2/employees`.
      bodies: bodyRefs,
      suffix: "",
      params: [],
      media: vendor(versions),
    },
    {
      prefix: "/v2",
      item: ref("EmployeeV2"),
      page: ref("EmployeeV2Page"),
      bodies: v2,
      suffix: "V2",
      params: [],
      media: vendor({ "2": versions["2"] }),
    },
  ];
}

const VERSION_NOTE =
  " Employees come in version 1 (`name`) and version 2 (`firstName`, `lastName`): `/v2/employees`, `API-Version: 2` or `Accept: application/vnd.svc.v2+json` selects version 2 (of the body too: without one, a body here is version 1).";

/** What every operation of one collection variant is described with, resolved once. */
interface Operations {
  r: CrudResource;
  v: Variant;
  tag: string;
  /** The variant's request bodies; the writes are only described when it has them. */
  bodies: Variant["bodies"];
  writes: ReadonlyArray<"POST" | "PUT" | "PATCH" | "DELETE">;
  /** `/employees/{parentId}/projects` (with the variant's prefix). */
  collection: string;
  /** Operation id parts: `EmployeeProjects`, `EmployeeProject`. */
  plural: string;
  singular: string;
  /** `employee`, and ` of one employee` for a nested collection. */
  noun: string;
  within: string;
  versionNote: string;
  /** Path parameters and the variant's own. */
  params: Json[];
  /** …of a write with a body, whose version its schema states (no `API-Version`). */
  bodyParams: Json[];
  /** The 404 of a parent that does not exist, for a nested collection. */
  parentMissing: Json;
  /** A write that moves money: an Idempotency-Key is required. */
  moneyKey: boolean;
}

function operationsOf(r: CrudResource, v: Variant): Operations {
  return {
    r,
    v,
    tag: r.path.split("/")[1] ?? r.collection,
    bodies: v.bodies,
    writes: writesOf(r),
    collection: `${v.prefix}${oas(r.path)}`,
    plural: r.parent ? `${r.parent.noun}${capital(r.collection)}` : capital(r.collection),
    singular: r.parent ? `${r.parent.noun}${r.noun}` : r.noun,
    noun: r.noun.toLowerCase(),
    within: r.parent ? ` of one ${r.parent.noun.toLowerCase()}` : "",
    versionNote: r.path.startsWith("/employees") ? VERSION_NOTE : "",
    params: [...pathParams(r), ...v.params],
    bodyParams: pathParams(r),
    parentMissing: r.parent ? { "404": response("NotFound") } : {},
    moneyKey: r.path === "/payments" || r.path === "/transfers",
  };
}

/** The collection's and its items' operations, under the variant's paths. */
function collectionOperations(
  r: CrudResource,
  v: Variant,
  paths: Record<string, Json>,
  tags: Set<string>,
): void {
  const o = operationsOf(r, v);
  tags.add(o.tag);
  const col: Json = { get: listOperation(o) };
  if (o.writes.includes("POST") && o.bodies) col.post = createOperation(o, o.bodies);
  paths[o.collection] = col;
  if (r.itemRoute === false) return;
  const itemParams = [...o.params, idParameter("id", r.noun)];
  const it: Json = { get: readOperation(o, itemParams) };
  const bodyParams = [...o.bodyParams, idParameter("id", r.noun)];
  if (o.writes.includes("PUT") && o.bodies) it.put = replaceOperation(o, o.bodies, bodyParams);
  if (o.writes.includes("PATCH") && o.bodies) it.patch = updateOperation(o, o.bodies, bodyParams);
  if (o.writes.includes("DELETE")) it.delete = deleteOperation(o, itemParams);
  paths[`${o.collection}/{id}`] = it;
}

function listOperation({ r, v, tag, plural, within, versionNote, params, parentMissing }: Operations): Json {
  return {
    tags: [tag],
    operationId: `list${plural}${v.suffix}`,
    summary: `A page of ${r.collection}${within}`,
    description: `Pages (\`page\`, \`size\` ≤ 100), sorted by \`sort\` and filtered by the parameters below; an unknown or repeated parameter is a 400. Also as CSV (\`Accept: text/csv\`), XML, text and HTML.${r.parent ? ` A ${r.parent.noun.toLowerCase()} that does not exist is a 404.` : ""}${versionNote}`,
    parameters: [...params, ...listParams(r)],
    responses: {
      "200": ok(`A page of ${r.collection}`, v.page, {
        "text/csv": { schema: { type: "string" } },
        ...v.media.page,
      }),
      ...parentMissing,
      ...ANY,
    },
  };
}

function createOperation(o: Operations, bodies: NonNullable<Variant["bodies"]>): Json {
  const { r, v, noun, within, moneyKey, versionNote } = o;
  const accepted = r.path === "/transfers";
  return {
    tags: [o.tag],
    operationId: `create${o.singular}${v.suffix}`,
    summary: `Create a ${noun}${within}`,
    description: `${
      accepted
        ? "Accepts a transfer and executes it in the background: the `Location` names the transfer, whose `status` tells the outcome."
        : `Creates a ${noun}; \`Location\` names it.`
    } Type and shape errors are 400 with \`errors\` per field; broken business rules are 422.${
      moneyKey ? " An `Idempotency-Key` is required." : " An `Idempotency-Key` makes a retry safe."
    }${versionNote}`,
    parameters: o.bodyParams,
    requestBody: jsonBody(bodies.create),
    responses: {
      [accepted ? "202" : "201"]: created(
        accepted ? "Accepted; `Location` names the transfer" : `Created; \`Location\` names the ${noun}`,
        v.item,
        v.media.item,
      ),
      ...o.parentMissing,
      "409": response("Conflict"),
      "422": unprocessable("POST", r.path),
      ...ANY,
    },
  };
}

function readOperation({ r, v, tag, singular, noun, versionNote }: Operations, itemParams: Json[]): Json {
  return {
    tags: [tag],
    operationId: `get${singular}${v.suffix}`,
    summary: `One ${noun}`,
    description: `The ${noun} in the negotiated representation, with a strong ETag.${versionNote}`,
    parameters: [...itemParams],
    responses: {
      "200": ok(r.noun, v.item, v.media.item),
      "404": response("NotFound"),
      ...ANY,
    },
  };
}

/**
 * The business rules the writes check once a body is valid against its schema, by collection (and
 * method where they differ): a 422 whose `errors` names the field at fault (spec part 7 rule 2). A
 * schema cannot say that a referenced id exists, that stock is left or that a state allows a
 * change, so each operation's 422 lists its rules, every field at fault in backticks.
 */
const BUSINESS_RULES: Record<string, readonly string[]> = {
  "/employees": [
    "`department` names no department",
    "`managerId` names no employee, the employee itself or one it manages",
    "`salary` is not positive",
  ],
  "/projects": ["`department` names no department", "`budget` is negative"],
  "/products": ["`categoryId` names no category", "`price` is not positive", "`stock` is negative"],
  "/users": ["`customerId` names no customer"],
  "/accounts": [
    "`balance` is negative, or has more decimals than the minor unit of its `currency` (EUR 2, JPY 0)",
  ],
  "/transfers": [
    "`fromAccountId` or `toAccountId` names no account",
    "`toAccountId` is `fromAccountId`, or holds another currency",
    "`amount` is not positive, or has more decimals than the minor unit of the accounts' currency",
  ],
  "POST /orders": [
    "`customerId` names no customer",
    "an item's `productId` names no product",
    "an item's `quantity` exceeds the stock left of its product",
    "the `items` total more than 10^12 EUR",
  ],
  "PATCH /orders": [
    "`status` is no transition from the order's state (PAID → SHIPPED; PENDING or PAID → CANCELLED)",
    "`trackingNumber` and `carrier` are missing to ship",
  ],
  "/payments": ["`orderId` names no order", "`amount` is not the order's total"],
  "/cart": ["`items` name a product twice, or one that does not exist, or total more than 10^12 EUR"],
};

/** The 422 of a write to `path`: its business rules, and a reused `Idempotency-Key` on a POST. */
function unprocessable(method: "POST" | "PUT" | "PATCH", path: string): Json {
  const rules = [...(BUSINESS_RULES[`${method} ${path}`] ?? BUSINESS_RULES[path] ?? [])];
  if (method === "POST") rules.push("an `Idempotency-Key` is reused with another payload");
  if (rules.length === 0) return response("Unprocessable");
  return errorResponse(
    `A business rule is broken (\`errors\` names the field at fault): ${rules.join("; ")}`,
  );
}

/** The errors of a write to one item. */
const itemErrors = (method: "PUT" | "PATCH", path: string) => ({
  "404": response("NotFound"),
  "409": response("Conflict"),
  "422": unprocessable(method, path),
});

function replaceOperation(o: Operations, bodies: NonNullable<Variant["bodies"]>, itemParams: Json[]): Json {
  const { v, noun } = o;
  return {
    tags: [o.tag],
    operationId: `replace${o.singular}${v.suffix}`,
    summary: `Replace a ${noun}`,
    description: `Replaces the whole ${noun}: every field is required, an omitted optional field is cleared. The path names the ${noun}: a body \`id\` is tolerated when it repeats the path's, any other is a 400. \`If-Match\` makes it a compare-and-swap.${o.versionNote}`,
    parameters: [...itemParams],
    requestBody: jsonBody(bodies.replace),
    responses: {
      "200": ok(`The ${noun} as replaced`, v.item, v.media.item),
      ...itemErrors("PUT", o.r.path),
      ...ANY,
    },
  };
}

function updateOperation(o: Operations, bodies: NonNullable<Variant["bodies"]>, itemParams: Json[]): Json {
  const { v, noun } = o;
  const orderPatch = o.r.path === "/orders";
  return {
    tags: [o.tag],
    operationId: `update${o.singular}${v.suffix}`,
    summary: orderPatch ? "Ship or cancel an order" : `Change some fields of a ${noun}`,
    description: orderPatch
      ? "PAID → SHIPPED (with `carrier` and `trackingNumber`), PENDING or PAID → CANCELLED; any other transition is a 422. PENDING → PAID happens by `POST /payments`."
      : `Changes only the fields sent (at least one); the id is not one of them (a body \`id\` other than the path's is a 400). \`If-Match\` makes it a compare-and-swap.${o.versionNote}`,
    parameters: [...itemParams],
    requestBody: jsonBody(bodies.patch),
    responses: {
      "200": ok(`The ${noun} as changed`, v.item, v.media.item),
      ...itemErrors("PATCH", o.r.path),
      ...ANY,
    },
  };
}

function deleteOperation({ v, tag, singular, noun }: Operations, itemParams: Json[]): Json {
  return {
    tags: [tag],
    operationId: `delete${singular}${v.suffix}`,
    summary: `Delete a ${noun}`,
    description: `Deletes the ${noun}; one still referenced by others is a 409. \`If-Match\` makes it conditional.`,
    parameters: [...itemParams],
    responses: {
      "204": noContent("Deleted"),
      "404": response("NotFound"),
      "409": response("Conflict"),
      ...ANY,
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Routes that are not plain collections
// ---------------------------------------------------------------------------------------------

const PUBLIC = { security: [] };
const idParam = [idParameter("id", "Order")];

const OTHER_PATHS: Record<string, Json> = {
  "/": {
    get: {
      tags: ["root"],
      operationId: "getRoot",
      summary: "Links to every collection",
      description: "The entry point: a HAL resource linking every top-level collection and the cart.",
      responses: { "200": ok("The API root", ref("Root")), ...ANY },
    },
  },
  "/cart": {
    get: {
      tags: ["cart"],
      operationId: "getCart",
      summary: "The caller's cart",
      description: "The authenticated caller's cart (possibly empty), never shared between users.",
      responses: { "200": ok("The cart", ref("Cart")), ...ANY },
    },
    put: {
      tags: ["cart"],
      operationId: "replaceCart",
      summary: "Replace the caller's cart",
      description:
        "Replaces every line of the cart; each product at most once, and each must exist (422). `If-Match` makes it a compare-and-swap.",
      requestBody: jsonBody(ref("CartInput")),
      responses: { "200": ok("The cart", ref("Cart")), "422": unprocessable("PUT", "/cart"), ...ANY },
    },
    delete: {
      tags: ["cart"],
      operationId: "emptyCart",
      summary: "Empty the caller's cart",
      description: "Removes every line of the cart. `If-Match` makes it conditional.",
      responses: { "204": noContent("Emptied"), ...ANY },
    },
  },
  "/cart/items/{productId}": {
    get: {
      tags: ["cart"],
      operationId: "getCartLine",
      summary: "One line of the caller's cart",
      description:
        "The caller's cart line for a product, as the cart lists it (read-only: `PUT /cart` changes the lines). A product the caller's cart does not hold is a 404.",
      parameters: [idParameter("productId", "Product")],
      responses: {
        "200": ok("The line", ref("CartLine")),
        "404": response("NotFound"),
        ...ANY,
      },
    },
  },
  "/orders/{id}/tracking": {
    get: {
      tags: ["orders"],
      operationId: "getOrderTracking",
      summary: "Tracking of a shipped order",
      description:
        "Carrier and tracking number of a SHIPPED order, or a QR code of this resource's URL (`image/png`, `image/svg+xml`). Any other order is a 404.",
      parameters: [...idParam],
      responses: {
        "200": ok("Tracking, or a QR code of this resource's URL", ref("Tracking"), {
          "image/png": { schema: { type: "string", contentMediaType: "image/png" } },
          "image/svg+xml": { schema: { type: "string" } },
        }),
        "404": response("NotFound"),
        ...ANY,
      },
    },
  },
  "/orders/{id}/invoice": {
    get: {
      tags: ["orders"],
      operationId: "getOrderInvoice",
      summary: "Invoice of a paid or shipped order",
      description:
        "The invoice of a PAID or SHIPPED order, also as a printable PDF (`Accept: application/pdf`). Any other order is a 404.",
      parameters: [...idParam],
      responses: {
        "200": ok("The invoice", ref("Invoice"), {
          "application/pdf": { schema: { type: "string", contentMediaType: "application/pdf" } },
        }),
        "404": response("NotFound"),
        ...ANY,
      },
    },
  },
  "/auth/token": {
    post: {
      tags: ["auth"],
      operationId: "issueToken",
      summary: "Exchange Basic credentials for an access token",
      description:
        "Trades the Basic credentials of a user for an ES256-signed JWT, valid for 15 minutes; a token is not traded for a token. Never cached.",
      security: [{ basic: [] }],
      responses: {
        "200": {
          description: "The access token",
          headers: CORRELATION,
          content: { "application/json": { schema: ref("Token") } },
        },
        "413": response("ContentTooLarge"),
        "415": response("UnsupportedMediaType"),
        ...ANY,
      },
    },
  },
  "/.well-known/jwks.json": {
    get: {
      tags: ["auth"],
      operationId: "getJwks",
      summary: "Public keys that verify the access tokens",
      description: "The JSON Web Key Set whose keys verify the service's ES256 access tokens.",
      ...PUBLIC,
      responses: {
        "200": {
          description: "JWKS",
          headers: { ETag: header("ETag"), ...CORRELATION },
          content: { "application/json": { schema: ref("Jwks") } },
        },
        ...ANY,
      },
    },
  },
  "/health": {
    get: {
      tags: ["operations"],
      operationId: "getHealth",
      summary: "Liveness",
      description: "Answers 200 while the process serves requests; checks no dependency.",
      ...PUBLIC,
      responses: {
        "200": {
          description: "Up",
          headers: { ETag: header("ETag"), ...CORRELATION },
          content: { "application/json": { schema: ref("Health") } },
        },
        ...ANY,
      },
    },
  },
  "/ready": {
    get: {
      tags: ["operations"],
      operationId: "getReadiness",
      summary: "Readiness: database and Redis reachable",
      description: "Checks every dependency on each call; a 503 with `Retry-After` names the one down.",
      ...PUBLIC,
      responses: {
        "200": {
          description: "Ready",
          headers: { ETag: header("ETag"), ...CORRELATION },
          content: { "application/json": { schema: ref("Readiness") } },
        },
        ...ANY,
        "503": {
          description: "Not ready: the error record plus the state of each dependency",
          headers: { "Retry-After": header("RetryAfter"), ...CORRELATION },
          content: {
            ...ERROR_CONTENT,
            "application/json": { schema: ref("ReadinessFailure") },
          },
        },
      },
    },
  },
  "/openapi.json": {
    get: {
      tags: ["operations"],
      operationId: "getOpenApiDocument",
      summary: "This OpenAPI document",
      description:
        "The OpenAPI 3.1 description of the resource API, generated from the server's own schemas.",
      ...PUBLIC,
      responses: {
        "200": {
          description: "The document",
          headers: { ETag: header("ETag"), ...CORRELATION },
          content: { "application/json": { schema: ref("OpenApiDocument") } },
        },
        ...ANY,
      },
    },
  },
  "/docs": {
    get: {
      tags: ["operations"],
      operationId: "getDocs",
      summary: "Interactive documentation",
      description: "Swagger UI over this document, served from the service's own origin.",
      ...PUBLIC,
      responses: {
        "200": {
          description: "An HTML page",
          headers: CORRELATION,
          content: { "text/html": { schema: { type: "string" } } },
        },
        ...ANY,
      },
    },
  },
};

const TAGS: Record<string, string> = {
  root: "The entry point",
  employees: "Employees, in two representation versions, and the projects each works on",
  departments: "Departments",
  projects: "Projects",
  categories: "Product categories",
  products: "Products and their reviews",
  customers: "Customers and their orders",
  users: "User accounts and their orders",
  orders: "Orders, their lines, tracking and invoices",
  payments: "Payments of orders",
  accounts: "Accounts",
  transfers: "Transfers between accounts, executed asynchronously",
  events: "Events logged through the SOAP customer service",
  notifications: "Notifications queued through the SOAP customer service",
  cart: "The caller's cart",
  auth: "Access tokens and the keys that verify them",
  operations: "Liveness, readiness and this documentation",
};

/**
 * The OpenAPI 3.1 document, generated from the zod schemas that validate the requests and from
 * the collection definitions that serve them, so it cannot describe a route that does not exist.
 */
/** Writes: their body, version 1's on `/employees`, is not chosen by `API-Version`. */
const isWrite = ({ method }: OpenApiOperationContext) => method !== "get";
const MONEY = new Set(["/payments", "/transfers"]);

/**
 * What the composed packages add to every operation, each from the options the server gives it
 * (spec parts 2, 4, 5, 7, 8 and 9): the error record (@svc/errors), 406, 413 and 415
 * (@svc/negotiate), HAL links and pages (@svc/hal), ETag, If-Match, If-None-Match, 304 and 412
 * (@svc/conditional), the credentials and 401/403 (@svc/auth), the quota fields and 429
 * (@svc/ratelimit), the Idempotency-Key of every POST behind authentication and its 409/422
 * (@svc/idempotency), and the version parameters and fields (@svc/versioning).
 */
function fragments(): OpenApiFragment[] {
  return [
    ERRORS,
    negotiateOpenApi({ bodyLimit: "100 KiB", bodies: isWrite }),
    halOpenApi(),
    conditionalOpenApi(),
    authOpenApi({
      basic: { description: "The demo users' name and password" },
      bearer: { description: "An access token from `POST /auth/token`" },
      forbidden: (c) => isWrite(c) && !c.path.startsWith("/auth/"),
    }),
    rateLimitOpenApi({ applies: (c) => c.secured }),
    idempotencyOpenApi({
      applies: (c) => c.secured && !c.path.startsWith("/auth/"),
      required: (c) => MONEY.has(c.path),
    }),
    versioningOpenApi(VERSIONING, {
      selectable: (c) => !(c.path.startsWith("/employees") && c.operation.requestBody !== undefined),
    }),
  ];
}

/** `X-Correlation-ID` on every response, as the error handler and the access log send it. */
function correlated(document: Json): void {
  const each = (response: unknown) => {
    if (!response || typeof response !== "object" || "$ref" in response) return;
    const r = response as Json;
    r.headers = { ...CORRELATION, ...((r.headers as Json | undefined) ?? {}) };
  };
  const components = document.components as { responses: Record<string, Json> };
  for (const response of Object.values(components.responses)) each(response);
  for (const item of Object.values(document.paths as Record<string, Json>))
    for (const operation of Object.values(item))
      for (const response of Object.values(((operation as Json).responses as Json | undefined) ?? {}))
        each(response);
}

/**
 * The OpenAPI 3.1 document, generated from the zod schemas that validate the requests and from
 * the collection definitions that serve them, so it cannot describe a route that does not exist,
 * and composed with the fragments of the packages that answer in front of them.
 */
export function openApiDocument(resources: readonly CrudResource[], extra: Json = {}): Json {
  const { schemas: requestBodySchemas, bodies } = requestSchemas();
  const schemas: Record<string, Json> = { ...requestBodySchemas, ...commonSchemas() };
  const paths: Record<string, Json> = {};
  const tags = new Set<string>(["root", "cart", "auth", "operations"]);
  const v2Paths: Record<string, Json> = {};
  for (const r of resources) {
    for (const v of variantsOf(r, bodies)) collectionOperations(r, v, v.prefix ? v2Paths : paths, tags);
  }
  for (const [name, item] of Object.entries(ITEMS)) {
    schemas[name] = item;
    const collection =
      Object.entries(ITEM_OF)
        .find(([, n]) => n === name)?.[0]
        .split("/")
        .pop() ?? name.toLowerCase();
    schemas[`${name}Page`] = halPage(name === "EmployeeV2" ? "employees" : collection, ref(name));
  }
  Object.assign(paths, OTHER_PATHS, v2Paths, extra);
  prune(schemas, { paths, RESPONSES }, Object.keys(requestBodySchemas));
  describeXmlArrays(schemas);
  const document = composeOpenApi(
    {
      openapi: "3.1.0",
      info: {
        title: "@svc reference service",
        version: "1.0.0",
        description:
          "Employees, customers, orders, products, accounts and transfers. JSON by default; HAL+JSON, XML, CSV (collections), text and HTML by `Accept`. Errors are the error record, in JSON or XML (or RFC 9457 problem details by `Accept`). Every resource request needs Basic or Bearer credentials; writes need the `write` scope. Employees come in versions 1 and 2 (`/v2/employees`, `API-Version: 2`, or `Accept: application/vnd.svc.v2+json`).",
        license: { name: "MIT", identifier: "MIT" },
        contact: { name: "@svc maintainers" },
      },
      servers: [{ url: "/" }],
      security: [{ basic: [] }, { bearer: [] }],
      tags: [...tags].map((name) => ({ name, description: TAGS[name] ?? capital(name) })),
      paths,
      components: { schemas, responses: RESPONSES, headers: HEADERS, parameters: PARAMETERS },
    },
    fragments(),
  );
  correlated(document);
  return document;
}
