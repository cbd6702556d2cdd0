import { z } from "zod";
import type { CrudResource, Ctx } from "./routes/crud.js";
import { REQUEST_SCHEMAS } from "./schemas.js";

type Json = Record<string, unknown>;

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const errorResponse = (description: string) => ({
  description,
  content: { "application/json": { schema: ref("ErrorRecord") } },
});
const halResponse = (description: string) => ({
  description,
  content: {
    "application/json": { schema: ref("HalResource") },
    "application/hal+json": { schema: ref("HalResource") },
  },
});

/** Adds binary media types to a response; OpenAPI 3.1 lets binary content go without a schema. */
const withBinary = (response: ReturnType<typeof halResponse>, types: Record<string, Json>) => ({
  ...response,
  content: { ...response.content, ...types },
});

/** `/employees/:id` → `/employees/{id}` */
const oas = (path: string) => path.replace(/:(\w+)/g, "{$1}");

function schemaNameOf(resource: CrudResource): string | undefined {
  if (!resource.input) return undefined;
  const schema = resource.input({ req: {} } as Ctx);
  const meta = schema.meta() as { id?: string } | undefined;
  return meta?.id;
}

function pathParams(path: string): Json[] {
  return [...path.matchAll(/:(\w+)/g)].map((m) => ({
    name: m[1],
    in: "path",
    required: true,
    schema: { type: "integer", minimum: 1 },
  }));
}

const op = (tag: string, summary: string, responses: Json, more: Json = {}) => ({
  tags: [tag],
  summary,
  responses,
  ...more,
});
const idParam = [{ name: "id", in: "path", required: true, schema: { type: "integer", minimum: 1 } }];

/** Routes that are not plain collections. */
const OTHER_PATHS: Record<string, Json> = {
  "/": { get: op("root", "Links to every collection", { "200": halResponse("The API root") }) },
  "/cart": {
    get: op("cart", "The caller's cart", { "200": halResponse("The cart") }),
    put: op(
      "cart",
      "Replace the caller's cart",
      {
        "200": halResponse("The cart"),
        "412": errorResponse("If-Match does not match"),
        "422": errorResponse("Unknown product"),
      },
      { requestBody: { required: true, content: { "application/json": { schema: ref("CartInput") } } } },
    ),
    delete: op("cart", "Empty the caller's cart", { "204": { description: "Emptied" } }),
  },
  "/orders/{id}/tracking": {
    get: op(
      "orders",
      "Tracking of a SHIPPED order",
      {
        "200": withBinary(halResponse("Tracking, or a QR code of this resource's URL"), {
          "image/png": {},
          "image/svg+xml": {},
        }),
        "404": errorResponse("No such order, or not shipped"),
      },
      { parameters: idParam },
    ),
  },
  "/orders/{id}/invoice": {
    get: op(
      "orders",
      "Invoice of a PAID or SHIPPED order",
      {
        "200": withBinary(halResponse("Invoice, also as a printable PDF"), { "application/pdf": {} }),
        "404": errorResponse("No such order, or not paid"),
      },
      { parameters: idParam },
    ),
  },
  "/auth/token": {
    post: op(
      "auth",
      "Exchange Basic credentials for an ES256 access token",
      {
        "200": {
          description: '`{ access_token, token_type: "Bearer", expires_in }`',
          content: {
            "application/json": {
              schema: {
                type: "object",
                properties: {
                  access_token: { type: "string" },
                  token_type: { const: "Bearer" },
                  expires_in: { type: "integer" },
                },
              },
            },
          },
        },
        "401": errorResponse("Bad or missing Basic credentials"),
      },
      { security: [{ basic: [] }] },
    ),
  },
  "/.well-known/jwks.json": {
    get: op(
      "auth",
      "Public keys that verify the access tokens",
      { "200": { description: "JWKS" } },
      { security: [] },
    ),
  },
  "/health": { get: op("operations", "Liveness", { "200": { description: "Up" } }, { security: [] }) },
  "/ready": {
    get: op(
      "operations",
      "Readiness: database and Redis reachable",
      { "200": { description: "Ready" }, "503": errorResponse("Not ready; see Retry-After") },
      { security: [] },
    ),
  },
};

/**
 * The OpenAPI 3.1 document, generated from the zod schemas that validate the requests and from
 * the collection definitions that serve them, so it cannot describe a route that does not exist.
 */
export function openApiDocument(resources: readonly CrudResource[], extra: Json = {}): Json {
  const components = z.toJSONSchema(z.globalRegistry, {
    target: "draft-2020-12",
    uri: (id) => `#/components/schemas/${id}`,
  }) as { schemas: Record<string, Json> };
  const schemas: Record<string, Json> = {};
  for (const name of Object.keys(REQUEST_SCHEMAS)) {
    const s = components.schemas[name];
    if (s) {
      const { $schema: _drop, ...rest } = s;
      schemas[name] = rest;
    }
  }
  schemas.ErrorRecord = {
    type: "object",
    required: ["timestamp", "status", "error", "message", "path"],
    properties: {
      timestamp: { type: "string", format: "date-time" },
      status: { type: "integer" },
      error: { type: "string" },
      message: { type: "string" },
      path: { type: "string" },
      errors: {
        type: "array",
        items: {
          type: "object",
          properties: { field: { type: "string" }, message: { type: "string" } },
        },
      },
    },
  };
  const links = { type: "object", required: ["self"], additionalProperties: { type: "object" } };
  const employeeCommon = {
    email: { type: "string", format: "email" },
    department: { type: "string" },
    city: { type: "string" },
    salary: { type: "number" },
    managerId: { type: ["integer", "null"] },
    _links: links,
  };
  schemas.Employee = {
    type: "object",
    properties: { id: { type: "integer" }, name: { type: "string" }, ...employeeCommon },
  };
  schemas.EmployeeV2 = {
    type: "object",
    properties: {
      id: { type: "integer" },
      firstName: { type: "string" },
      lastName: { type: "string" },
      ...employeeCommon,
    },
  };
  schemas.HalResource = {
    type: "object",
    required: ["_links"],
    properties: { _links: { type: "object", required: ["self"] }, _embedded: { type: "object" } },
    additionalProperties: true,
  };
  const common = {
    "400": errorResponse("Invalid request: bad parameter, malformed body, field errors"),
    "401": errorResponse("No or bad credentials"),
    "406": errorResponse("No acceptable representation"),
    "429": errorResponse("Rate limit exceeded; see Retry-After"),
    "503": errorResponse("Temporarily unavailable; see Retry-After"),
  };
  const paths: Record<string, Json> = {};
  for (const r of resources) {
    const collection = oas(r.path);
    const item = `${collection}/{id}`;
    const tag = r.path.split("/")[1] ?? r.collection;
    const name = schemaNameOf(r);
    const writes = r.writes ?? (r.input ? ["POST", "PUT", "PATCH", "DELETE"] : []);
    const body = name
      ? { required: true, content: { "application/json": { schema: ref(name) } } }
      : undefined;
    const listParams: Json[] = [
      ...pathParams(r.path),
      { name: "page", in: "query", schema: { type: "integer", minimum: 1, default: 1 } },
      { name: "size", in: "query", schema: { type: "integer", minimum: 1, maximum: 100, default: 20 } },
      {
        name: "sort",
        in: "query",
        description: "`<field>` or `<field>,desc`",
        schema: { type: "string", enum: Object.keys(r.list.sort).flatMap((f) => [f, `${f},desc`]) },
      },
      ...Object.entries(r.list.filters).map(([f, spec]) => ({
        name: f,
        in: "query",
        description: spec.match === "contains" ? "case-insensitive substring" : "exact match",
        schema: { type: spec.match === "int" ? "integer" : "string" },
      })),
    ];
    const col: Json = {
      get: {
        tags: [tag],
        summary: `A page of ${r.collection}`,
        parameters: listParams,
        responses: { "200": halResponse(`A page of ${r.collection}`), ...common },
      },
    };
    if (writes.includes("POST") && body) {
      col.post = {
        tags: [tag],
        summary: `Create a ${r.noun.toLowerCase()}`,
        parameters: [...pathParams(r.path), { $ref: "#/components/parameters/IdempotencyKey" }],
        requestBody: body,
        responses: {
          [r.path === "/transfers" ? "202" : "201"]: halResponse(
            r.path === "/transfers"
              ? "Accepted; Location names the status resource"
              : "Created; see Location",
          ),
          "409": errorResponse("Duplicate unique value or conflicting state"),
          "415": errorResponse("Unsupported Content-Type"),
          "422": errorResponse("A business rule is broken"),
          ...common,
        },
      };
    }
    paths[collection] = col;
    const itemParams = [
      ...pathParams(r.path),
      { name: "id", in: "path", required: true, schema: { type: "integer" } },
    ];
    const it: Json = {
      get: {
        tags: [tag],
        summary: `One ${r.noun.toLowerCase()}`,
        parameters: itemParams,
        responses: {
          "200": halResponse(r.noun),
          "304": { description: "Not modified (If-None-Match)" },
          "404": errorResponse("No such resource"),
          ...common,
        },
      },
    };
    for (const method of ["PUT", "PATCH"] as const) {
      if (!writes.includes(method)) continue;
      it[method.toLowerCase()] = {
        tags: [tag],
        summary:
          method === "PUT"
            ? `Replace a ${r.noun.toLowerCase()} (whole object)`
            : "Change only the fields sent",
        parameters: itemParams,
        requestBody: body ?? { content: { "application/json": { schema: { type: "object" } } } },
        responses: {
          "200": halResponse(r.noun),
          "404": errorResponse("No such resource"),
          "409": errorResponse("Duplicate unique value"),
          "412": errorResponse("If-Match does not match the current ETag"),
          "422": errorResponse("A business rule is broken"),
          ...common,
        },
      };
    }
    if (writes.includes("DELETE")) {
      it.delete = {
        tags: [tag],
        summary: `Delete a ${r.noun.toLowerCase()}`,
        parameters: itemParams,
        responses: {
          "204": { description: "Deleted" },
          "404": errorResponse("No such resource"),
          "409": errorResponse("Still referenced"),
          "412": errorResponse("If-Match does not match the current ETag"),
          ...common,
        },
      };
    }
    if (r.itemRoute !== false) paths[item] = it;
  }
  const employeeItem = paths["/employees/{id}"] as Record<string, { parameters?: unknown[] }> | undefined;
  const employeeList = paths["/employees"] as Record<string, { parameters?: unknown[] }> | undefined;
  for (const op of [...Object.values(employeeItem ?? {}), ...Object.values(employeeList ?? {})]) {
    op.parameters = [...(op.parameters ?? []), { $ref: "#/components/parameters/ApiVersion" }];
  }
  if (employeeItem?.get) {
    (employeeItem.get as Json).responses = {
      ...((employeeItem.get as Json).responses as Json),
      "200": {
        description:
          "The employee; version 2 (`/v2/...`, `API-Version: 2` or the vendor media type) splits `name`",
        content: {
          "application/json": { schema: ref("Employee") },
          "application/hal+json": { schema: ref("Employee") },
          "application/vnd.svc.v2+json": { schema: ref("EmployeeV2") },
          "application/xml": {},
          "text/plain": {},
          "text/html": {},
        },
      },
    };
  }
  Object.assign(paths, OTHER_PATHS, extra);
  return {
    openapi: "3.1.0",
    info: {
      title: "@svc reference service",
      version: "1.0.0",
      description:
        "Employees, customers, orders, products, accounts and transfers. JSON by default; HAL+JSON, XML, CSV (collections), text and HTML by Accept. Employees come in versions 1 and 2 (`/v2/employees`, `API-Version: 2`, or `Accept: application/vnd.svc.v2+json`).",
    },
    servers: [{ url: "/" }],
    security: [{ basic: [] }, { bearer: [] }],
    tags: [...new Set(resources.map((r) => r.path.split("/")[1]))].map((name) => ({ name })),
    paths,
    components: {
      schemas,
      parameters: {
        ApiVersion: {
          name: "API-Version",
          in: "header",
          description: "Employee representation version (1 or 2); `Accept-Version` works too",
          schema: { type: "integer", enum: [1, 2], default: 1 },
        },
        IdempotencyKey: {
          name: "Idempotency-Key",
          in: "header",
          description: "Makes a POST safe to retry; required on /payments and /transfers",
          schema: { type: "string", minLength: 1, maxLength: 255 },
        },
      },
      securitySchemes: {
        basic: { type: "http", scheme: "basic" },
        bearer: { type: "http", scheme: "bearer", bearerFormat: "JWT" },
      },
    },
  };
}
