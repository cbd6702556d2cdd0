import type { IncomingMessage, Server, ServerResponse } from "node:http";
import { brotliDecompressSync, gunzipSync, inflateSync } from "node:zlib";
import { absoluteFormOrigin } from "@svc/errors";
import Ajv2020Module from "ajv/dist/2020.js";
import addFormatsModule from "ajv-formats";
import { resources } from "../src/app.js";
import { openApiDocument } from "../src/openapi.js";
import { Background } from "../src/routes/money.js";
import { events, notifications } from "../src/soap/index.js";

/*
 * Every response a suite receives from a reference server is checked against /openapi.json: its
 * status must be documented for the operation (method + path template), its media type for that
 * status, and a JSON body must match the schema. The responses are recorded on the server side
 * (so fetch, node:http and raw sockets are all seen) and checked after each test, which fails
 * when one was not as documented.
 */

type Json = Record<string, unknown>;
type ValidateFn = ((data: unknown) => boolean) & {
  errors?: Array<{ instancePath: string; message?: string }> | null;
};
interface AjvLike {
  compile(schema: Json): ValidateFn;
  addSchema(schema: Json): void;
}

interface Recorded {
  method: string;
  url: string;
  status: number;
  contentType: string | undefined;
  contentEncoding: string | undefined;
  body: Buffer;
  truncated: boolean;
}

/** Bodies are kept up to this size; a larger one is checked for its status and media type only. */
const MAX_BODY = 2 * 1024 * 1024;
/** Paths with a contract of their own (the WSDLs of the SOAP services) or static files. */
const OTHER_CONTRACTS = [/^\/ws\//i, /^\/docs\/./i];

let document: Json | undefined;

/** The document the app serves at /openapi.json, built the way the app builds it. */
export function documentOfTheApp(): Json {
  document ??= openApiDocument([...resources(new Background()), events, notifications]);
  return document;
}

interface Operation {
  responses: Record<string, { content?: Record<string, { schema?: Json }> } | { $ref: string }>;
}

interface Route {
  template: string;
  pattern: RegExp;
  params: number;
  operations: Record<string, Operation>;
}

/** The reference server's version-neutral paths (its `apiVersioning({ neutral })`). */
const NEUTRAL = /^\/(?:health|ready|openapi\.json|docs|\.well-known|auth)(?:\/|$)/;

class Checker {
  readonly #doc: Json;
  readonly #routes: Route[];
  readonly #ajv: AjvLike;
  readonly #validators = new Map<string, ValidateFn>();
  /** How many responses ended at each step of the check (`OPENAPI_CHECK_STATS=1` prints them). */
  readonly stats: Record<string, number> = {};
  #count(step: string): undefined {
    this.stats[step] = (this.stats[step] ?? 0) + 1;
    return undefined;
  }

  constructor(doc: Json) {
    this.#doc = doc;
    const paths = doc.paths as Record<string, Record<string, Operation>>;
    this.#routes = Object.entries(paths)
      .map(([template, operations]) => ({
        template,
        // Paths are canonical: exact case, no trailing slash, no empty segment (any other
        // spelling is a 404 for a path no operation documents).
        pattern: new RegExp(`^${template.replace(/[.]/g, "\\.").replace(/\{\w+\}/g, "[^/]+")}$`),
        params: (template.match(/\{/g) ?? []).length,
        operations,
      }))
      // A literal segment wins over a parameter (`/orders/{id}/items` before nothing ambiguous).
      .sort((a, b) => a.params - b.params);
    const Ajv2020 = ((Ajv2020Module as unknown as { default?: unknown }).default ?? Ajv2020Module) as new (
      opts: Json,
    ) => AjvLike;
    const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ??
      addFormatsModule) as (ajv: unknown) => void;
    this.#ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true });
    addFormats(this.#ajv);
    const components = doc.components as { schemas: Json };
    this.#ajv.addSchema({
      $id: "https://svc.invalid/openapi.json",
      components: { schemas: components.schemas },
    });
  }

  #route(path: string): Route | undefined {
    const found = this.#routes.find((r) => r.pattern.test(path));
    if (found) return found;
    // `/v1/...` and `/v2/...` (the supported versions): the versioning middleware strips the prefix.
    // A version-neutral path (the operational endpoints) ignores any `/v<N>` prefix, as
    // @svc/versioning documents: `/v99/health` is `/health`.
    const version = /^\/v(\d+)(\/.*)?$/.exec(path);
    if (!version) return undefined;
    const unprefixed = version[2] ?? "/";
    if (version[1] !== "1" && version[1] !== "2" && !NEUTRAL.test(unprefixed)) return undefined;
    return this.#routes.find((r) => r.pattern.test(unprefixed));
  }

  #response(op: Operation, status: number) {
    let res = op.responses[String(status)];
    if (res && "$ref" in res) {
      const name = res.$ref.split("/").pop() as string;
      res = ((this.#doc.components as Json).responses as Json)[name] as typeof res;
    }
    return res as { content?: Record<string, { schema?: Json }> } | undefined;
  }

  #validator(key: string, schema: Json): ValidateFn {
    let v = this.#validators.get(key);
    if (!v) {
      const rebased = JSON.parse(
        JSON.stringify(schema).replaceAll('"#/components/', '"https://svc.invalid/openapi.json#/components/'),
      );
      v = this.#ajv.compile(rebased);
      this.#validators.set(key, v);
    }
    return v;
  }

  /** What is wrong with a response, or undefined when it is as documented. */
  check(r: Recorded): string | undefined {
    // An absolute-form target (RFC 9112 §3.2.2) names the same resource as its path.
    const path = r.url.slice(absoluteFormOrigin(r.url).length).split("?")[0] || "/";
    if (OTHER_CONTRACTS.some((p) => p.test(path))) return this.#count("other contract");
    const route = this.#route(path);
    const method = r.method === "HEAD" ? "get" : r.method.toLowerCase();
    if (!route) {
      // A path the document does not name may only be refused.
      return r.status < 400
        ? `${r.status} for a path no operation documents`
        : this.#count("unknown path, refused");
    }
    const op = route.operations[method];
    if (!op) {
      // A method the path does not document may only be refused (405, or OPTIONS' 204 + Allow).
      // Express answers OPTIONS itself (200) on the operational routes, which set no handler.
      if (r.method === "OPTIONS" && (r.status === 204 || r.status === 200)) return this.#count("OPTIONS");
      return r.status < 400
        ? `${r.status} for a method ${route.template} does not document`
        : this.#count("undocumented method, refused");
    }
    const where = `${method.toUpperCase()} ${route.template}`;
    const documented = this.#response(op, r.status);
    if (!documented) return `status ${r.status} is not documented for ${where}`;
    const empty = r.body.length === 0;
    if (empty) return this.#count("status checked, no body");
    const mediaType = r.contentType?.split(";")[0]?.trim().toLowerCase();
    if (!mediaType) return `${where} → ${r.status}: a body without Content-Type`;
    const content = documented.content ?? {};
    const entry =
      content[mediaType] ??
      Object.entries(content).find(([t]) => t.endsWith("/*") && mediaType.startsWith(t.slice(0, -1)))?.[1];
    if (!entry) {
      return `${where} → ${r.status}: media type ${mediaType} is not documented (documented: ${Object.keys(content).join(", ") || "none"})`;
    }
    if (!/^application\/(?:[\w.+-]+\+)?json$/.test(mediaType) || !entry.schema || r.truncated)
      return this.#count("status and media type checked");
    let body: Buffer;
    try {
      body = decode(r.body, r.contentEncoding);
    } catch {
      return `${where} → ${r.status}: the ${r.contentEncoding} body does not decode`;
    }
    let data: unknown;
    try {
      data = JSON.parse(body.toString("utf8"));
    } catch {
      return `${where} → ${r.status}: the ${mediaType} body is not JSON`;
    }
    const validate = this.#validator(JSON.stringify(entry.schema), entry.schema);
    if (validate(data)) return this.#count("status, media type and JSON body checked");
    const problems = (validate.errors ?? [])
      .slice(0, 5)
      .map((e) => `${e.instancePath || "/"} ${e.message ?? ""}`)
      .join("; ");
    return `${where} → ${r.status} ${mediaType}: the body does not match the schema: ${problems}; body ${body.toString("utf8").slice(0, 300)}`;
  }
}

function decode(body: Buffer, encoding: string | undefined): Buffer {
  switch ((encoding ?? "identity").trim().toLowerCase()) {
    case "gzip":
    case "x-gzip":
      return gunzipSync(body);
    case "br":
      return brotliDecompressSync(body);
    case "deflate":
      return inflateSync(body);
    default:
      return body;
  }
}

let checker: Checker | undefined;
const pending: Recorded[] = [];
const watched = new WeakSet<Server>();

/** Records every response `server` sends, for the check after the test that caused it. */
export function watchResponses(server: Server): void {
  if (watched.has(server)) return;
  watched.add(server);
  // Before the app's own listener, so the app's writes go through these wrappers.
  server.prependListener("request", (req: IncomingMessage, res: ServerResponse) => {
    // Read now: routers and the versioning middleware rewrite `req.url` on the way.
    const url = req.url ?? "/";
    const chunks: Buffer[] = [];
    let size = 0;
    let truncated = false;
    const keep = (chunk: unknown, encoding: unknown) => {
      if (chunk === undefined || chunk === null || typeof chunk === "function") return;
      const buf =
        typeof chunk === "string"
          ? Buffer.from(chunk, typeof encoding === "string" ? (encoding as BufferEncoding) : "utf8")
          : Buffer.from(chunk as Uint8Array);
      if (size + buf.length > MAX_BODY) truncated = true;
      else chunks.push(buf);
      size += buf.length;
    };
    // The fields a framework hands `writeHead` (Fastify's reply fields) are written without
    // becoming the response's own (`getHeader`), unless that already holds some.
    let headed: Record<string, unknown> | undefined;
    const writeHead = res.writeHead;
    res.writeHead = function (this: ServerResponse, ...args: unknown[]) {
      const fields = args.find((a) => typeof a === "object" && a !== null && !Array.isArray(a));
      if (fields !== undefined) headed = fields as Record<string, unknown>;
      return (writeHead as (...a: unknown[]) => ServerResponse).apply(this, args);
    } as ServerResponse["writeHead"];
    const field = (name: string) => res.getHeader(name) ?? headed?.[name];
    const write = res.write;
    const end = res.end;
    res.write = function (this: ServerResponse, chunk: unknown, ...rest: unknown[]) {
      keep(chunk, rest[0]);
      return (write as (...a: unknown[]) => boolean).call(this, chunk, ...rest);
    } as ServerResponse["write"];
    res.end = function (this: ServerResponse, chunk?: unknown, ...rest: unknown[]) {
      keep(chunk, rest[0]);
      const type = field("content-type");
      const encoding = field("content-encoding");
      pending.push({
        method: req.method ?? "GET",
        url,
        status: res.statusCode,
        contentType: type === undefined ? undefined : String(type),
        contentEncoding: encoding === undefined ? undefined : String(encoding),
        body: req.method === "HEAD" ? Buffer.alloc(0) : Buffer.concat(chunks),
        truncated,
      });
      return (end as (...a: unknown[]) => ServerResponse).call(this, chunk, ...rest);
    } as ServerResponse["end"];
  });
}

/** What is wrong with one response, or undefined when it is as documented. */
export function problemWith(response: {
  method: string;
  url: string;
  status: number;
  contentType?: string;
  body?: string;
}): string | undefined {
  checker ??= new Checker(documentOfTheApp());
  return checker.check({
    method: response.method,
    url: response.url,
    status: response.status,
    contentType: response.contentType,
    contentEncoding: undefined,
    body: Buffer.from(response.body ?? ""),
    truncated: false,
  });
}

/** Checks the responses recorded since the last call; throws when one was not as documented. */
export function checkRecordedResponses(): void {
  if (pending.length === 0) return;
  const started = performance.now();
  checker ??= new Checker(documentOfTheApp());
  const batch = pending.splice(0);
  const problems = new Set<string>();
  for (const r of batch) {
    const problem = checker.check(r);
    if (problem) problems.add(`${r.method} ${r.url.slice(0, 200)} → ${r.status}: ${problem}`);
  }
  checker.stats["ms spent checking"] = Math.round(
    (checker.stats["ms spent checking"] ?? 0) + performance.now() - started,
  );
  if (problems.size > 0) {
    throw new Error(
      `${problems.size} response(s) not as /openapi.json documents them:\n${[...problems].slice(0, 20).join("\n")}`,
    );
  }
}

/** What the check did (`OPENAPI_CHECK_STATS` set): printed once a file's tests are done. */
export function reportCheckStats(): void {
  if (process.env.OPENAPI_CHECK_STATS && checker)
    process.stdout.write(`openapi check: ${JSON.stringify(checker.stats)}\n`);
}
