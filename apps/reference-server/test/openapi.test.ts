import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { versionedOpenApi } from "@svc/versioning";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { VERSIONING } from "../src/pipeline.js";
import { documentOfTheApp, problemWith } from "./openapi-check.js";

const APP = join(dirname(fileURLToPath(import.meta.url)), "..");
const require = createRequire(import.meta.url);

/** The path of a CLI's entry script, run with this Node (no shell, no network: both lint offline). */
function bin(pkg: string, name: string): string {
  const manifest = require.resolve(`${pkg}/package.json`);
  const bins = (require(manifest) as { bin: Record<string, string> }).bin;
  return join(dirname(manifest), bins[name] as string);
}

function run(script: string, args: string[]): { status: number | null; stdout: string; stderr: string } {
  const result = spawnSync(process.execPath, [script, ...args], {
    cwd: APP,
    encoding: "utf8",
    timeout: 120_000,
    env: { ...process.env, REDOCLY_TELEMETRY: "off", REDOCLY_SUPPRESS_UPDATE_NOTICE: "true", NO_COLOR: "1" },
  });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

type Json = Record<string, unknown>;
type Operation = {
  operationId?: string;
  description?: string;
  tags?: string[];
  requestBody?: Json;
  responses: Json;
};

describe("the OpenAPI document", () => {
  const doc = documentOfTheApp() as {
    paths: Record<string, Record<string, Operation>>;
    tags: Array<{ name: string }>;
    components: { schemas: Record<string, Json> };
  };
  // The served document, and the one @svc/versioning makes of it for each version: linted together.
  const perVersion = versionedOpenApi(doc, VERSIONING);
  let dir: string;
  let files: string[];
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), "svc-openapi-"));
    files = [
      ["openapi.json", doc] as const,
      ...[...perVersion].map(([v, d]) => [`openapi-v${v}.json`, d] as const),
    ].map(([name, d]) => {
      const file = join(dir, name);
      writeFileSync(file, JSON.stringify(d, null, 2));
      return file;
    });
  });

  it("@svc/versioning makes a document per version: version 1 without /v2, version 2 naming itself", () => {
    expect([...perVersion.keys()]).toEqual(["1", "2"]);
    const one = perVersion.get("1") as { paths: Record<string, unknown> };
    const two = perVersion.get("2") as {
      paths: Record<string, Record<string, Operation & { parameters?: Json[] }>>;
    };
    expect(Object.keys(one.paths).some((p) => p.startsWith("/v2/"))).toBe(false);
    expect(Object.keys(two.paths)).toContain("/v2/employees");
    expect(two.paths["/departments"]?.get?.parameters).toContainEqual(
      expect.objectContaining({
        name: "API-Version",
        required: true,
        schema: expect.objectContaining({ enum: ["2"] }),
      }),
    );
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("redocly lint (recommended, redocly.yaml) reports no error", () => {
    const errors: string[] = [];
    for (const file of files) {
      const out = run(bin("@redocly/cli", "redocly"), [
        "lint",
        file,
        "--config",
        join(APP, "redocly.yaml"),
        "--format=json",
        "--max-problems=1000",
      ]);
      const report = JSON.parse(out.stdout.slice(out.stdout.indexOf("{"))) as {
        totals: { errors: number };
        problems: Array<{
          ruleId: string;
          severity: string;
          message: string;
          location: Array<{ pointer: string }>;
        }>;
      };
      errors.push(
        ...report.problems
          .filter((p) => p.severity === "error")
          .map((p) => `${basename(file)} ${p.ruleId} ${p.location[0]?.pointer}: ${p.message}`),
      );
      if (report.totals.errors !== 0 && errors.length === 0)
        errors.push(`${basename(file)}: ${report.totals.errors} errors`);
    }
    expect(errors).toEqual([]);
  }, 120_000);

  it("spectral lint (spectral:oas, .spectral.yaml) reports no error", () => {
    const out = run(bin("@stoplight/spectral-cli", "spectral"), [
      "lint",
      ...files,
      "--ruleset",
      join(APP, ".spectral.yaml"),
      "--format",
      "json",
      "--quiet",
    ]);
    const results = JSON.parse(out.stdout.slice(out.stdout.indexOf("[")) || "[]") as Array<{
      code: string;
      source: string;
      severity: number;
      message: string;
      path: string[];
    }>;
    // Spectral's severities: 0 error, 1 warning, 2 info, 3 hint.
    const errors = results
      .filter((r) => r.severity === 0)
      .map((r) => `${r.source} ${r.code} ${r.path.join(".")}: ${r.message}`);
    expect(errors).toEqual([]);
    expect(out.status).toBe(0);
  }, 120_000);

  it("the writes the server serves are documented: POST /orders, /payments, /transfers", () => {
    expect(doc.paths["/orders"]?.post?.requestBody).toBeDefined();
    expect(doc.paths["/payments"]?.post?.requestBody).toBeDefined();
    expect(doc.paths["/transfers"]?.post?.responses["202"]).toBeDefined();
  });

  it("no schema has a fragment in $id", () => {
    expect(JSON.stringify(doc)).not.toMatch(/"\$id":"[^"]*#/);
  });

  it("every operation has an operationId, a description and declared tags", () => {
    const declared = new Set(doc.tags.map((t) => t.name));
    const ids = new Set<string>();
    for (const [path, ops] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(ops)) {
        expect([path, method, typeof op.operationId]).toEqual([path, method, "string"]);
        expect([path, method, (op.description ?? "").length > 0]).toEqual([path, method, true]);
        for (const tag of op.tags ?? []) expect([path, tag, declared.has(tag)]).toEqual([path, tag, true]);
        expect(ids.has(op.operationId as string)).toBe(false);
        ids.add(op.operationId as string);
      }
    }
  });

  it("a PATCH body needs no field but one; no write body documents an id; business minimums are in the schema", () => {
    const s = doc.components.schemas as Record<string, { properties: Json; required?: string[] }>;
    const props = (name: string) => s[name]?.properties ?? {};
    expect(s.EmployeePatch).toMatchObject({ minProperties: 1 });
    expect(s.EmployeePatch?.required).toBeUndefined();
    expect(Object.keys(props("EmployeeInput"))).not.toContain("id");
    expect(Object.keys(props("EmployeePatch"))).not.toContain("id");
    expect(JSON.stringify(doc.paths["/v2/employees/{id}"]?.put?.requestBody)).toContain(
      "#/components/schemas/EmployeeV2Input",
    );
    expect(props("ProductInput").price).toMatchObject({ exclusiveMinimum: 0, multipleOf: 0.01 });
    expect(props("ProjectInput").budget).toMatchObject({ minimum: 0 });
    expect(props("EmployeeInput").salary).toMatchObject({ exclusiveMinimum: 0 });
    expect(JSON.stringify(doc.paths["/orders/{id}"]?.patch)).toContain("#/components/schemas/OrderPatch");
  });
});

describe("the response check of the test harness", () => {
  const department = {
    id: 1,
    name: "Engineering",
    city: "Berlin",
    _links: { self: { href: "http://x/departments/1" }, employees: { href: "http://x/employees" } },
  };
  const json = "application/json; charset=utf-8";
  const error = JSON.stringify({
    timestamp: "2026-01-01T00:00:00.000Z",
    status: 404,
    error: "Not Found",
    message: "Department 9 does not exist",
    path: "/departments/9",
  });

  it("GET /departments/1 → 200 with a department → as documented", () => {
    expect(
      problemWith({
        method: "GET",
        url: "/departments/1",
        status: 200,
        contentType: json,
        body: JSON.stringify(department),
      }),
    ).toBeUndefined();
    expect(
      problemWith({ method: "HEAD", url: "/departments/1?x=1", status: 200, contentType: json }),
    ).toBeUndefined();
    expect(
      problemWith({ method: "GET", url: "/departments/9", status: 404, contentType: json, body: error }),
    ).toBeUndefined();
  });

  it("GET /departments/1 → 418 → the status is not documented", () => {
    expect(problemWith({ method: "GET", url: "/departments/1", status: 418 })).toMatch(
      /status 418 is not documented/,
    );
  });

  it("GET /departments/1 → 200 without _links, or with an unknown field → the body does not match", () => {
    const { _links, ...bare } = department;
    expect(
      problemWith({
        method: "GET",
        url: "/departments/1",
        status: 200,
        contentType: json,
        body: JSON.stringify(bare),
      }),
    ).toMatch(/does not match the schema/);
    expect(
      problemWith({
        method: "GET",
        url: "/departments/1",
        status: 200,
        contentType: json,
        body: JSON.stringify({ ...department, budget: 3 }),
      }),
    ).toMatch(/does not match the schema/);
    expect(
      problemWith({ method: "GET", url: "/departments/9", status: 404, contentType: json, body: "{}" }),
    ).toMatch(/does not match the schema/);
  });

  it("GET /departments/1 → 200 image/gif → the media type is not documented", () => {
    expect(
      problemWith({
        method: "GET",
        url: "/departments/1",
        status: 200,
        contentType: "image/gif",
        body: "GIF89a",
      }),
    ).toMatch(/media type image\/gif is not documented/);
  });

  it("a 2xx for an undocumented path or method is reported; a refusal is not", () => {
    expect(problemWith({ method: "GET", url: "/nowhere", status: 200 })).toMatch(/no operation documents/);
    expect(problemWith({ method: "DELETE", url: "/payments/1", status: 204 })).toMatch(/does not document/);
    expect(
      problemWith({ method: "DELETE", url: "/payments/1", status: 405, contentType: json, body: error }),
    ).toBeUndefined();
    expect(
      problemWith({ method: "GET", url: "/nowhere", status: 404, contentType: json, body: error }),
    ).toBeUndefined();
  });

  it("/v2/employees/1 is version 2; /v1/employees/1 is /employees/1", () => {
    const v1 = {
      id: 1,
      name: "Ada Lovelace",
      email: "ada@example.com",
      department: "Engineering",
      city: "London",
      salary: 1000,
      managerId: null,
      _links: {
        self: { href: "/employees/1" },
        update: { href: "/employees/1" },
        delete: { href: "/employees/1" },
        department: { href: "/departments/1" },
        projects: { href: "/employees/1/projects" },
      },
    };
    const body = JSON.stringify(v1);
    expect(
      problemWith({ method: "GET", url: "/v1/employees/1", status: 200, contentType: json, body }),
    ).toBeUndefined();
    expect(
      problemWith({ method: "GET", url: "/v2/employees/1", status: 200, contentType: json, body }),
    ).toMatch(/does not match/);
  });
});
