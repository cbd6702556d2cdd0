import { type ApiVersion, createPipeline } from "@svc/kernel";
import { expressAdapter } from "@svc/kernel/express";
import { json, representations } from "@svc/negotiate";
import { express4, listen } from "@svc/test-utils";
import {
  conformance,
  type DiagnosticRow,
  diagnosticsTable,
  fallbackErrors,
  type Row,
} from "@svc/test-utils/conformance";
import express from "express";
import { describe, expect, it, onTestFinished } from "vitest";
import { type ApiVersioningOptions, type VersioningDiagnostic, versions } from "../src/index.js";
import { employeeMounts } from "./employee-mounts.js";

/** A message's members but its `request`, for each kind of message. */
type WithoutRequest<T> = T extends unknown ? Omit<T, "request"> : never;

// The query strategy (`?api-version=`) and a custom extractor (here: the version a tenant header
// pins) beside the path and header strategies, through listening servers of every framework:
// the version chosen, Vary, each refusal's status and code, and the message on svc:versioning.

const TENANT_VERSIONS: Record<string, string> = { legacy: "1", current: "2", broken: "two", future: "9" };

const options: ApiVersioningOptions = {
  versions: [1, 2],
  defaultVersion: 2,
  header: { names: ["API-Version"] },
  query: true,
  custom: {
    // The version a tenant is pinned to, read off the X-Tenant header.
    extract: ({ headers }) => {
      const tenant = headers["x-tenant"];
      return typeof tenant === "string" ? TENANT_VERSIONS[tenant] : undefined;
    },
    vary: ["X-Tenant"],
  },
  deprecated: { 1: { deprecation: "2026-01-01T00:00:00Z", sunset: "2026-07-01T00:00:00Z" } },
};

const pipeline = () =>
  createPipeline({ representations: representations({ offers: [json] }), versioning: versions(options) });

const employee = (version: ApiVersion | undefined) => ({ id: 7, version });

const mounts = (seen: object[] = []) => employeeMounts(express, pipeline, seen);

/** The refusal's message, by its kind (the error record's `code` is the error handler's to write). */
const MESSAGES: Record<string, RegExp> = {
  unsupported_api_version:
    /^API version 9 \((query parameter api-version|custom extractor)\) is not supported; supported versions: 1, 2$/,
  malformed_api_version:
    /^(Query parameter api-version must be one API version number|The custom version extractor must read one API version number)$/,
  conflicting_api_version: /^The request names API version \d \(.+\) and \d \(.+\)$/,
};
const code = (want: string) => (response: { text: string }) =>
  expect(JSON.parse(response.text).message).toMatch(MESSAGES[want] as RegExp);

/** Vary: the header names and the extractor's fields (then @svc/negotiate's Accept), never a query parameter. */
const VARY = /^API-Version, X-Tenant(, Accept)?$/i;

const rows: Row[] = [
  {
    name: "?api-version=1 → version 1, deprecated; Vary names no query parameter",
    request: { path: "/employees/7?api-version=1" },
    status: 200,
    headers: { vary: VARY, deprecation: "@1767225600", "api-supported-versions": "1, 2" },
    body: { id: 7, version: 1 },
  },
  {
    name: "?api-version=2&api-version=2 → version 2 (the same value twice agrees)",
    request: { path: "/employees/7?api-version=2&api-version=2" },
    status: 200,
    headers: { deprecation: null },
    body: { id: 7, version: 2 },
  },
  {
    name: "?api-version=9 → 400 unsupported_api_version",
    request: { path: "/employees/7?api-version=9" },
    status: 400,
    headers: { vary: VARY, "api-supported-versions": "1, 2" },
    body: code("unsupported_api_version"),
  },
  {
    name: "?api-version=v2 → 400 malformed_api_version",
    request: { path: "/employees/7?api-version=v2" },
    status: 400,
    body: code("malformed_api_version"),
  },
  {
    name: "?api-version=1&api-version=2 → 400 malformed_api_version",
    request: { path: "/employees/7?api-version=1&api-version=2" },
    status: 400,
    body: code("malformed_api_version"),
  },
  {
    name: "/v1/employees/7?api-version=2 → 400 conflicting_api_version",
    request: { path: "/v1/employees/7?api-version=2" },
    status: 400,
    body: code("conflicting_api_version"),
  },
  {
    name: "?api-version=1 with API-Version: 2 → 400 conflicting_api_version",
    request: { path: "/employees/7?api-version=1", headers: { "API-Version": "2" } },
    status: 400,
    body: code("conflicting_api_version"),
  },
  {
    name: "/v1/employees/7?api-version=1 → version 1 (path and query agree)",
    request: { path: "/v1/employees/7?api-version=1" },
    status: 200,
    body: { id: 7, version: 1 },
  },
  {
    name: "X-Tenant: legacy → version 1 by the custom extractor; Vary names X-Tenant",
    request: { path: "/employees/7", headers: { "X-Tenant": "legacy" } },
    status: 200,
    headers: { vary: VARY, deprecation: "@1767225600" },
    body: { id: 7, version: 1 },
  },
  {
    name: "X-Tenant: future → 400 unsupported_api_version",
    request: { path: "/employees/7", headers: { "X-Tenant": "future" } },
    status: 400,
    headers: { vary: VARY },
    body: code("unsupported_api_version"),
  },
  {
    name: "X-Tenant: broken → 400 malformed_api_version",
    request: { path: "/employees/7", headers: { "X-Tenant": "broken" } },
    status: 400,
    body: code("malformed_api_version"),
  },
  {
    name: "X-Tenant: legacy with ?api-version=2 → 400 conflicting_api_version",
    request: { path: "/employees/7?api-version=2", headers: { "X-Tenant": "legacy" } },
    status: 400,
    body: code("conflicting_api_version"),
  },
  {
    name: "X-Tenant: unknown-tenant → the default, Vary still names X-Tenant",
    request: { path: "/employees/7", headers: { "X-Tenant": "nobody" } },
    status: 200,
    headers: { vary: VARY },
    body: { id: 7, version: 2 },
  },
];

conformance("@svc/versioning query and custom strategies", () => mounts(), rows);

type DRow = DiagnosticRow<WithoutRequest<VersioningDiagnostic>>;

const messages: DRow[] = [
  {
    name: "?api-version=1 → chosen by query",
    request: { path: "/employees/7?api-version=1" },
    status: 200,
    message: { decision: "chosen", version: "1", strategy: "query", deprecated: true, sunset: true },
  },
  {
    name: "X-Tenant: current → chosen by custom",
    request: { path: "/employees/7", headers: { "X-Tenant": "current" } },
    status: 200,
    message: { decision: "chosen", version: "2", strategy: "custom", deprecated: false, sunset: false },
  },
  {
    name: "?api-version=9 → unsupported by query",
    request: { path: "/employees/7?api-version=9" },
    status: 400,
    message: { decision: "unsupported", strategy: "query" },
  },
  {
    name: "X-Tenant: future → unsupported by custom",
    request: { path: "/employees/7", headers: { "X-Tenant": "future" } },
    status: 400,
    message: { decision: "unsupported", strategy: "custom" },
  },
  {
    name: "?api-version=x → malformed by query",
    request: { path: "/employees/7?api-version=x" },
    status: 400,
    message: { decision: "malformed", strategy: "query" },
  },
  {
    name: "X-Tenant: broken → malformed by custom",
    request: { path: "/employees/7", headers: { "X-Tenant": "broken" } },
    status: 400,
    message: { decision: "malformed", strategy: "custom" },
  },
  {
    name: "/v1/...?api-version=2 → conflicting path and query",
    request: { path: "/v1/employees/7?api-version=2" },
    status: 400,
    message: { decision: "conflicting", strategies: ["path", "query"] },
  },
  {
    name: "?api-version=2 with X-Tenant: legacy → conflicting query and custom",
    request: { path: "/employees/7?api-version=2", headers: { "X-Tenant": "legacy" } },
    status: 400,
    message: { decision: "conflicting", strategies: ["query", "custom"] },
  },
];

diagnosticsTable("svc:versioning", mounts, messages);

describe("query and custom strategies on Express 4", () => {
  it("?api-version=1 and X-Tenant pick the version; a conflict is a 400", async () => {
    const app = express4();
    const svc = expressAdapter(pipeline());
    app.use(svc.prepare);
    app.get(
      "/employees/7",
      svc.handle((_req: express.Request, ctx) => employee(ctx.version)),
    );
    app.use(fallbackErrors.express);
    const { url, close } = await listen(app);
    onTestFinished(close);
    const byQuery = await fetch(`${url}/employees/7?api-version=1`);
    expect(await byQuery.json()).toEqual({ id: 7, version: 1 });
    expect(byQuery.headers.get("vary")).toMatch(VARY);
    const byTenant = await fetch(`${url}/employees/7`, { headers: { "X-Tenant": "legacy" } });
    expect(await byTenant.json()).toEqual({ id: 7, version: 1 });
    const both = await fetch(`${url}/employees/7?api-version=2`, { headers: { "X-Tenant": "legacy" } });
    expect(both.status).toBe(400);
    expect(((await both.json()) as { message: string }).message).toMatch(
      MESSAGES.conflicting_api_version as RegExp,
    );
  });
});
