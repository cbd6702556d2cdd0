import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Contract, type Json, stringify } from "./contract-cases.js";
import { ADMIN, type Started, sqlite } from "./harness.js";

/*
 * The served /openapi.json taken at its word: requests generated from it alone (parameters and
 * bodies from their schemas, edge cases included: integers past 2^63, malformed headers and
 * e-mail addresses) go to a listening server, and each answer is checked as a contract fuzzer
 * checks it:
 *   not_a_server_error            no 5xx
 *   status_code_conformance       the status is documented for the operation
 *   content_type_conformance      a body's media type is documented for that status
 *   response_headers_conformance  documented headers present when required, valid when sent
 *   response_schema_conformance   a JSON body is valid against the documented schema
 *   positive_data_acceptance      a valid request is not refused (a 422 only for a business rule
 *                                 the operation's 422 names: the field at fault in backticks)
 *   negative_data_rejection       a request the schemas forbid is refused with a 4xx
 *   ignored_auth                  an operation behind authentication refuses a request without it
 *   ensure_resource_availability  what a POST created (its Location) can be read at once
 *   use_after_free                what a DELETE removed is a 404 afterwards
 * Seeded (`CONTRACT_SEED` replays another run) and bounded (`CONTRACT_RUNS` cases per operation
 * and kind), every failure is collected, deduplicated per operation, check and status, and listed.
 */

const SEED = Number(process.env.CONTRACT_SEED ?? 20261124);
const RUNS = Number(process.env.CONTRACT_RUNS ?? 12);
const METHODS = ["get", "post", "put", "patch", "delete"] as const;
/** Reads first, then writes, deletions last: a deletion early would leave the rest only 404s. */
const ORDER: Record<string, number> = { get: 0, post: 1, put: 2, patch: 3, delete: 4 };

interface Operation {
  method: string;
  template: string;
  op: Json;
  parameters: Json[];
  body: Json | undefined;
}

interface Case {
  path: Record<string, string>;
  query: Array<[string, string]>;
  headers: Record<string, string>;
  body?: unknown;
  /** What makes the case invalid, for a negative one. */
  invalid?: string;
  /** Whether that part really breaks the document (a candidate may happen to be valid). */
  broken?: boolean;
}

interface Answer {
  status: number;
  headers: Headers;
  text: string;
}

let s: Started;
/** The admin's access token: Basic credentials would be verified (hashed) on every request. */
let bearer: string;
let contract: Contract;
let operations: Operation[];
const failures = new Map<string, string>();
const counts = { requests: 0, positive: 0, negative: 0, auth: 0, stateful: 0 };

function fail(check: string, o: Operation, key: string, detail: string): undefined {
  const id = `${check}: ${o.method.toUpperCase()} ${o.template} ${key}`;
  if (!failures.has(id)) failures.set(id, detail.slice(0, 600));
  return undefined;
}

const essence = (type: string | null) => (type ?? "").split(";")[0]?.trim().toLowerCase() ?? "";
const isJson = (type: string) => /^application\/(?:[\w.+-]+\+)?json$/.test(type);

function target(o: Operation, c: Case): string {
  const path = o.template.replace(/\{(\w+)\}/g, (_m, name: string) => encodeURIComponent(c.path[name] ?? ""));
  const query = new URLSearchParams(c.query).toString();
  return query ? `${path}?${query}` : path;
}

/** The admin's credentials in a scheme the operation takes: the token, else Basic. */
function credentials(o: Operation | undefined): string {
  const schemes = ((o?.op.security ?? contract.doc.security) as Array<Record<string, unknown>>).flatMap(
    Object.keys,
  );
  return schemes.length === 0 || schemes.includes("bearer") ? bearer : ADMIN;
}

async function send(
  method: string,
  url: string,
  c: Omit<Case, "path" | "query">,
  auth: Operation | false | undefined = undefined,
): Promise<Answer> {
  counts.requests++;
  const headers = new Headers(c.headers);
  if (auth !== false && !headers.has("authorization")) headers.set("authorization", credentials(auth));
  let body: string | null = null;
  if (c.body !== undefined) {
    body = stringify(c.body);
    headers.set("content-type", "application/json");
  }
  const res = await fetch(new URL(url, s.url), {
    method: method.toUpperCase(),
    headers,
    body,
    redirect: "manual",
  });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

function describeCase(o: Operation, c: Case, a: Answer): string {
  const headers = Object.entries(c.headers)
    .map(([k, v]) => `${k}: ${v}`)
    .join("; ");
  const body = c.body === undefined ? "" : ` body ${stringify(c.body).slice(0, 200)}`;
  return `${o.method.toUpperCase()} ${target(o, c)}${headers ? ` [${headers}]` : ""}${body}${
    c.invalid ? ` (invalid: ${c.invalid})` : ""
  } → ${a.status} ${a.text.slice(0, 240)}`;
}

/** The documented response for a status: exact, then `4XX`, then `default`. */
function documented(o: Operation, status: number): Json | undefined {
  const responses = o.op.responses as Json;
  const entry = responses[String(status)] ?? responses[`${String(status)[0]}XX`] ?? responses.default;
  return entry === undefined ? undefined : contract.resolve(entry);
}

/** The checks every answer goes through, whatever was sent. */
function checkAnswer(o: Operation, c: Case, a: Answer, method = o.method): undefined {
  const detail = () => describeCase(o, c, a);
  if (a.status >= 500) return fail("not_a_server_error", o, String(a.status), detail());
  const response = documented(o, a.status);
  if (!response) return fail("status_code_conformance", o, String(a.status), detail());
  for (const [name, h] of Object.entries((response.headers as Json | undefined) ?? {})) {
    const header = contract.resolve(h);
    const value = a.headers.get(name);
    if (value === null) {
      if (header.required === true)
        fail("response_headers_conformance", o, `${a.status} ${name} missing`, detail());
      continue;
    }
    const schema = contract.resolve(header.schema);
    const typed = schema.type === "integer" ? (/^\d+$/.test(value) ? Number(value) : value) : value;
    if (!contract.valid(schema, typed))
      fail("response_headers_conformance", o, `${a.status} ${name}`, `${name}: ${value}; ${detail()}`);
  }
  if (a.text === "" || method === "head") return;
  const type = essence(a.headers.get("content-type"));
  const content = (response.content as Record<string, Json> | undefined) ?? {};
  const media =
    content[type] ??
    Object.entries(content).find(([t]) => t.endsWith("/*") && type.startsWith(t.slice(0, -1)))?.[1];
  if (!media) return fail("content_type_conformance", o, `${a.status} ${type || "none"}`, detail());
  if (!isJson(type) || !media.schema) return;
  let data: unknown;
  try {
    data = JSON.parse(a.text);
  } catch {
    return fail("response_schema_conformance", o, `${a.status} not JSON`, detail());
  }
  const schema = media.schema as Json;
  if (!contract.valid(schema, data))
    fail("response_schema_conformance", o, `${a.status} ${contract.why(schema)}`, detail());
}

/** The fields a 422 names: its `errors`, or the Idempotency-Key it refused. */
function fieldsAtFault(c: Case, a: Answer): string[] {
  try {
    const record = JSON.parse(a.text) as { errors?: Array<{ field: string }> };
    if (record.errors?.length) return record.errors.map((e) => e.field.split(".").pop() ?? e.field);
  } catch {}
  return Object.keys(c.headers).some((h) => h.toLowerCase() === "idempotency-key")
    ? ["Idempotency-Key"]
    : ["?"];
}

/** A valid request is not refused, save for what the request itself asked (304, 412) or a documented rule. */
function checkAccepted(o: Operation, c: Case, a: Answer): undefined {
  const sent = (name: string) => Object.keys(c.headers).some((h) => h.toLowerCase() === name);
  if (a.status < 400 && a.status !== 304) return;
  if (a.status === 304 && sent("if-none-match")) return;
  if (a.status === 412 && sent("if-match")) return;
  if (a.status === 404 || a.status === 409 || a.status >= 500) return;
  if (a.status === 422) {
    const rules = String(documented(o, 422)?.description ?? "");
    const undescribed = fieldsAtFault(c, a).filter((f) => !rules.includes(`\`${f}\``));
    if (undescribed.length === 0) return;
    return fail("positive_data_acceptance", o, `422 ${undescribed.join(",")}`, describeCase(o, c, a));
  }
  let why = "";
  try {
    const record = JSON.parse(a.text) as { errors?: Array<{ field: string }>; message?: string };
    why = record.errors?.[0]?.field ?? record.message?.slice(0, 40) ?? "";
  } catch {}
  fail("positive_data_acceptance", o, `${a.status} ${why}`, describeCase(o, c, a));
}

// ---------------------------------------------------------------------------------------------
// Cases
// ---------------------------------------------------------------------------------------------

const wire = (v: unknown) =>
  typeof v === "string" ? v : typeof v === "bigint" ? v.toString() : JSON.stringify(v);

function schemaOf(p: Json): Json {
  return contract.resolve((p.schema as Json | undefined) ?? {});
}

/** Whether a parameter's value, as it travels (a string), is valid against its schema. */
function parameterValid(p: Json, raw: string): boolean {
  const schema = schemaOf(p);
  const numeric =
    schema.type === "integer" ||
    schema.type === "number" ||
    (Array.isArray(schema.enum) && schema.enum.every((e) => typeof e === "number"));
  if (!numeric) return contract.valid(schema, raw);
  if (!/^-?\d+(?:\.\d+)?$/.test(raw)) return false;
  if (schema.type === "integer" && raw.includes(".")) return false;
  if (!raw.includes(".")) {
    const n = BigInt(raw);
    if (schema.format === "int64" && (n > 2n ** 63n - 1n || n < -(2n ** 63n))) return false;
    if (typeof schema.maximum === "number" && n > BigInt(Math.floor(schema.maximum))) return false;
  }
  return contract.valid(schema, Number(raw));
}

function validCases(o: Operation): fc.Arbitrary<Case> {
  const parts: Record<string, fc.Arbitrary<unknown>> = {};
  for (const p of o.parameters) {
    const where = p.in as string;
    const values = contract.valuesOf(p.schema, where === "header" ? "header" : "any").map(wire);
    parts[`${where}:${p.name}`] =
      p.required === true || where === "path" ? values : fc.option(values, { nil: undefined });
  }
  if (o.body) parts.body = contract.valuesOf(o.body);
  return fc.record(parts).map((r) => assemble(o, r));
}

/** Whether every part of a case is valid against the document (generated values may not all be). */
function caseValid(o: Operation, c: Case): boolean {
  for (const p of o.parameters) {
    const name = p.name as string;
    const raw =
      p.in === "path"
        ? c.path[name]
        : p.in === "query"
          ? c.query.find(([n]) => n === name)?.[1]
          : c.headers[name];
    if (raw === undefined ? p.required === true : (p.in === "path" && raw === "") || !parameterValid(p, raw))
      return false;
  }
  return !o.body || (c.body !== undefined && contract.valid(o.body, c.body));
}

function assemble(o: Operation, r: Record<string, unknown>, invalid?: string): Case {
  const c: Case = { path: {}, query: [], headers: {} };
  for (const p of o.parameters) {
    const v = r[`${p.in}:${p.name}`];
    if (v === undefined) continue;
    if (p.in === "path") c.path[p.name as string] = v as string;
    else if (p.in === "query") c.query.push([p.name as string, v as string]);
    else if (p.in === "header") c.headers[p.name as string] = v as string;
  }
  if (o.body && r.body !== undefined) c.body = r.body;
  if (invalid) c.invalid = invalid;
  return c;
}

/** Cases with exactly one part the document forbids. */
function invalidCases(o: Operation): fc.Arbitrary<Case> | undefined {
  const base = validCases(o);
  const variants: fc.Arbitrary<Case>[] = [];
  const headerSafe = (v: string) => /^[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?$/.test(v);
  for (const p of o.parameters) {
    const invalid = contract.invalidOf(p.schema, true);
    if (invalid) {
      const bad = invalid.map(wire);
      variants.push(
        fc.tuple(base, bad).map(([c, v]) => {
          const copy = structuredClone(c);
          const name = p.name as string;
          if (p.in === "path") copy.path[name] = v;
          else if (p.in === "query") copy.query = [...copy.query.filter(([n]) => n !== name), [name, v]];
          else copy.headers[name] = v;
          copy.invalid = `${p.in} ${name} = ${JSON.stringify(v)}`;
          // An empty path segment names another resource (the collection), not an invalid id.
          const usable = !(p.in === "path" && v === "") && (p.in !== "header" || headerSafe(v));
          copy.broken = usable && !parameterValid(p, v);
          return copy;
        }),
      );
    }
    if (p.required === true && p.in !== "path") {
      variants.push(
        base.map((c) => {
          const copy = structuredClone(c);
          if (p.in === "query") copy.query = copy.query.filter(([n]) => n !== p.name);
          else delete copy.headers[p.name as string];
          copy.invalid = `required ${p.in} ${p.name} missing`;
          copy.broken = true;
          return copy;
        }),
      );
    }
  }
  if (o.body) {
    const schema = o.body;
    const bodies = contract.invalidBodyOf(schema);
    variants.push(
      fc.tuple(base, bodies).map(([c, body]) => ({
        ...c,
        body,
        invalid: `body ${stringify(body).slice(0, 80)}`,
        broken: !contract.valid(schema, body),
      })),
    );
    variants.push(
      base.map((c) => ({ ...c, body: undefined, invalid: "required body missing", broken: true })),
    );
  }
  return variants.length > 0 ? fc.oneof(...variants) : undefined;
}

/**
 * `count` generated values that `keep` accepts, out of at most eight times as many: a bounded
 * search, where a filtered arbitrary could spin forever on a schema it can hardly satisfy.
 */
function sample<T>(arb: fc.Arbitrary<T>, salt: number, keep: (v: T) => boolean, count = RUNS): T[] {
  return fc
    .sample(arb, { seed: SEED + salt, numRuns: count * 8 })
    .filter(keep)
    .slice(0, count);
}

// ---------------------------------------------------------------------------------------------
// The suite
// ---------------------------------------------------------------------------------------------

function operationsOf(doc: Json): Operation[] {
  const out: Operation[] = [];
  for (const [template, item] of Object.entries(doc.paths as Record<string, Json>)) {
    for (const method of METHODS) {
      const op = item[method] as Json | undefined;
      if (!op) continue;
      const parameters = [...((item.parameters as Json[]) ?? []), ...((op.parameters as Json[]) ?? [])].map(
        (p) => contract.resolve(p),
      );
      const requestBody = op.requestBody ? contract.resolve(op.requestBody) : undefined;
      const json = (requestBody?.content as Record<string, Json> | undefined)?.["application/json"];
      out.push({ method, template, op, parameters, body: json?.schema as Json | undefined });
    }
  }
  return out.sort((a, b) => (ORDER[a.method] ?? 0) - (ORDER[b.method] ?? 0));
}

/** The operation a method and a concrete path belong to. */
function operationAt(method: string, path: string): Operation | undefined {
  return operations.find(
    (o) =>
      o.method === method &&
      new RegExp(`^${o.template.replace(/[.]/g, "\\.").replace(/\{\w+\}/g, "[^/]+")}$`).test(path),
  );
}

describe("the served /openapi.json, taken at its word by generated requests", () => {
  const started = performance.now();
  beforeAll(async () => {
    s = await sqlite.start();
    const token = await fetch(`${s.url}/auth/token`, { method: "POST", headers: { authorization: ADMIN } });
    bearer = `Bearer ${((await token.json()) as { access_token: string }).access_token}`;
    const doc = (await (await fetch(`${s.url}/openapi.json`)).json()) as Json;
    contract = new Contract(doc);
    operations = operationsOf(doc);
  });
  afterAll(async () => {
    await s?.stop();
    process.stdout.write(
      `contract fuzz: ${JSON.stringify({ ...counts, failures: failures.size, seconds: Math.round((performance.now() - started) / 100) / 10 })}\n`,
    );
  });

  /** Failures of one phase, listed in the assertion. */
  const found = (check?: RegExp) =>
    [...failures].filter(([id]) => !check || check.test(id)).map(([id, d]) => `${id}\n    ${d}`);

  it("stateful: what a POST created is there at once, what a DELETE removed is gone", async () => {
    for (const create of operations.filter((o) => o.method === "post" && o.body)) {
      const item = operationAt("get", `${create.template.replace(/\{\w+\}/g, "1")}/1`);
      if (!item) continue;
      const cases = sample(validCases(create), 1, (c) => caseValid(create, c), RUNS * 2);
      for (const c of cases) {
        const a = await send("post", target(create, c), c, create);
        counts.stateful++;
        checkAnswer(create, c, a);
        const location = a.headers.get("location");
        if ((a.status !== 201 && a.status !== 202) || !location) continue;
        const path = new URL(location, s.url).pathname;
        const read = operationAt("get", path) ?? item;
        const got = await send("get", path, { headers: {} });
        checkAnswer(read, { path: {}, query: [], headers: {} }, got);
        if (got.status !== 200)
          fail(
            "ensure_resource_availability",
            create,
            String(got.status),
            `GET ${path} after ${describeCase(create, c, a)}`,
          );
        const remove = operationAt("delete", path);
        if (remove) {
          const gone = await send("delete", path, { headers: {} });
          checkAnswer(remove, { path: {}, query: [], headers: {} }, gone);
          if (gone.status === 204 || gone.status === 200) {
            const again = await send("get", path, { headers: {} });
            checkAnswer(read, { path: {}, query: [], headers: {} }, again);
            if (again.status !== 404)
              fail("use_after_free", remove, String(again.status), `GET ${path} → ${again.status}`);
          }
        }
        break;
      }
    }
    expect(found(/^(?:ensure_resource_availability|use_after_free)/)).toEqual([]);
  }, 60_000);

  it("ignored_auth: an operation behind authentication refuses a request without credentials", async () => {
    for (const [i, o] of operations.entries()) {
      const security = (o.op.security ?? (contract.doc.security as unknown[])) as unknown[];
      if (!security || security.length === 0) continue;
      const [c] = sample(validCases(o), 1000 + i, (v) => caseValid(o, v), 1);
      if (!c) continue;
      for (const authorization of [undefined, `Basic ${Buffer.from("nobody:wrong").toString("base64")}`]) {
        const headers = authorization ? { ...c.headers, authorization } : c.headers;
        const a = await send(
          o.method,
          target(o, c),
          { ...c, headers },
          authorization === undefined ? false : o,
        );
        counts.auth++;
        checkAnswer(o, c, a);
        if (a.status !== 401)
          fail(
            "ignored_auth",
            o,
            `${a.status}${authorization ? " bad credentials" : ""}`,
            describeCase(o, c, a),
          );
      }
    }
    expect(found(/^ignored_auth/)).toEqual([]);
  }, 60_000);

  it("every operation: valid requests accepted, invalid ones refused, every answer as documented", async () => {
    for (const [i, o] of operations.entries()) {
      if (process.env.CONTRACT_TRACE)
        process.stderr.write(`${o.method} ${o.template} ${Math.round(performance.now())}\n`);
      for (const c of sample(validCases(o), 2000 + i, (v) => caseValid(o, v))) {
        const a = await send(o.method, target(o, c), c, o);
        counts.positive++;
        checkAnswer(o, c, a);
        checkAccepted(o, c, a);
      }
      const invalid = invalidCases(o);
      if (!invalid) continue;
      for (const c of sample(invalid, 3000 + i, (v) => v.broken === true)) {
        const a = await send(o.method, target(o, c), c, o);
        counts.negative++;
        checkAnswer(o, c, a);
        if (a.status < 400 || a.status >= 500)
          fail(
            "negative_data_rejection",
            o,
            `${a.status} ${c.invalid?.split(" =")[0]}`,
            describeCase(o, c, a),
          );
      }
    }
    expect(found()).toEqual([]);
  }, 120_000);
});

/*
 * The inputs the generated runs found, as named rows: each pairs what the served document says
 * with what the server answers, so either drifting alone fails.
 */
describe("what the served /openapi.json says, row by row", () => {
  let doc: Json;
  let c: Contract;
  let t: Started;
  let token: string;
  beforeAll(async () => {
    t = await sqlite.start();
    doc = (await (await fetch(`${t.url}/openapi.json`)).json()) as Json;
    c = new Contract(doc);
    const res = await fetch(`${t.url}/auth/token`, { method: "POST", headers: { authorization: ADMIN } });
    token = `Bearer ${((await res.json()) as { access_token: string }).access_token}`;
  });
  afterAll(() => t?.stop());

  const op = (path: string, method: string) => (doc.paths as Record<string, Json>)[path]?.[method] as Json;
  const param = (o: Json, name: string) =>
    (o.parameters as Json[]).map((p) => c.resolve(p)).find((p) => p.name === name) as Json;
  const bodySchema = (o: Json) =>
    ((c.resolve<Json>(o.requestBody).content as Record<string, Json>)["application/json"] as Json)
      .schema as Json;
  const call = (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
    fetch(`${t.url}${path}`, {
      method,
      headers: {
        authorization: token,
        ...(body === undefined ? {} : { "content-type": "application/json" }),
        ...headers,
      },
      body: body === undefined ? null : JSON.stringify(body),
    });

  it("GET /employees/9223372036854775808 → 400, outside the documented int64 id", async () => {
    const id = c.resolve<Json>(param(op("/employees/{id}", "get"), "id").schema);
    expect(id).toMatchObject({ type: "integer", format: "int64", minimum: 1 });
    expect((await call("GET", "/employees/9223372036854775808")).status).toBe(400);
    expect((await call("GET", "/employees/9223372036854775807")).status).toBe(404);
  });

  it('POST /customers {"email": "a@b-.com"} → 400, and the schema refuses it too', async () => {
    const schema = bodySchema(op("/customers", "post"));
    const body = { name: "Ada", email: "a@b-.com", city: "London" };
    expect(c.valid(schema, body)).toBe(false);
    expect((await call("POST", "/customers", body)).status).toBe(400);
    const good = { ...body, email: "ada.lovelace+svc@example-mail.co.uk" };
    expect(c.valid(schema, good)).toBe(true);
    expect((await call("POST", "/customers", good)).status).toBe(201);
  });

  it('POST /departments {"name": "   "} or a NUL → 400, and the schema refuses both', async () => {
    const schema = bodySchema(op("/departments", "post"));
    for (const name of ["   ", "R&D\u0000"]) {
      expect(c.valid(schema, { name, city: "Oslo" })).toBe(false);
      expect((await call("POST", "/departments", { name, city: "Oslo" })).status).toBe(400);
    }
  });

  it("a name of 100 emoji fits maxLength 100 and is taken; 100 letters and a space are not", async () => {
    const schema = bodySchema(op("/departments", "post"));
    const emoji = { name: "😀".repeat(100), city: "Oslo" };
    expect(c.valid(schema, emoji)).toBe(true);
    expect((await call("POST", "/departments", emoji)).status).toBe(201);
    const padded = { name: `${"a".repeat(100)} `, city: "Oslo" };
    expect(c.valid(schema, padded)).toBe(false);
    expect((await call("POST", "/departments", padded)).status).toBe(400);
  });

  it("GET /projects?name=%00 → 400, and the filter's schema refuses NUL", async () => {
    const name = c.resolve<Json>(param(op("/projects", "get"), "name").schema);
    expect(c.valid(name, "\u0000")).toBe(false);
    expect((await call("GET", "/projects?name=%00")).status).toBe(400);
  });

  it('POST /products {"categoryId": 999999} → 422 naming categoryId, which the 422 documents', async () => {
    const o = op("/products", "post");
    const body = { name: "Lamp", sku: "LAMP-1", categoryId: 999_999, price: 10, stock: 1 };
    expect(c.valid(bodySchema(o), body)).toBe(true);
    const res = await call("POST", "/products", body, { "idempotency-key": "lamp-1" });
    expect(res.status).toBe(422);
    expect(((await res.json()) as { errors: Array<{ field: string }> }).errors[0]?.field).toBe("categoryId");
    expect(String(c.resolve<Json>((o.responses as Json)["422"]).description)).toContain("`categoryId`");
  });

  it("PUT /v2/employees/1 with an id other than 1 → 400; the documented body has no id", async () => {
    const schema = bodySchema(op("/v2/employees/{id}", "put"));
    expect(Object.keys((c.resolve<Json>(schema).properties as Json) ?? {})).not.toContain("id");
    const current = (await (await call("GET", "/v2/employees/1")).json()) as Json;
    const { _links, id, ...body } = current;
    expect(c.valid(schema, body)).toBe(true);
    expect((await call("PUT", "/v2/employees/1", { ...body, id: 2 })).status).toBe(400);
    expect((await call("PUT", "/v2/employees/1", { ...body, id })).status).toBe(200);
  });

  it("If-None-Match: x (malformed) → 200, as the parameter's description says; * → 304", async () => {
    const described = String(param(op("/employees/{id}", "get"), "If-None-Match").description);
    expect(described).toMatch(/malformed member of the list matches nothing/);
    expect((await call("GET", "/employees/1", undefined, { "if-none-match": "x" })).status).toBe(200);
    expect((await call("GET", "/employees/1", undefined, { "if-none-match": "*" })).status).toBe(304);
  });
});
