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
    paths[item] = it;
  }
  Object.assign(paths, extra);
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
