import { createPipeline } from "@svc/kernel";
import { json, representations } from "@svc/negotiate";
import { express4 } from "@svc/test-utils";
import {
  conformance,
  type DiagnosticRow,
  diagnosticsTable,
  type Row,
  type RowResponse,
} from "@svc/test-utils/conformance";
import express from "express";
import { expect } from "vitest";
import { type ApiVersioningOptions, type VersioningDiagnostic, versions } from "../src/index.js";
import { employeeMounts } from "./employee-mounts.js";

// Versions that are not integers, `major.minor` and ISO 8601 dates, named by every strategy (path,
// header, query, media type, custom extractor) through listening servers of every framework:
// the version chosen, its order in API-Supported-Versions, Deprecation and Sunset per version,
// Vary, and each refusal's status and record, as for integer versions.

type WithoutRequest<T> = T extends unknown ? Omit<T, "request"> : never;

/** The version a tenant is pinned to (X-Tenant), for the custom strategy. */
const pinned =
  (table: Record<string, string>): NonNullable<ApiVersioningOptions["custom"]>["extract"] =>
  ({ headers }) => {
    const tenant = headers["x-tenant"];
    return typeof tenant === "string" ? table[tenant] : undefined;
  };

const common = {
  header: { names: ["API-Version"] },
  query: true,
  mediaType: { vendor: "svc" },
} satisfies Partial<ApiVersioningOptions>;

const majorMinor: ApiVersioningOptions = {
  ...common,
  // Given in any order: listed and compared per component (1.10 after 1.9).
  versions: ["2.0", "1.10", "1.9", "1.0"],
  defaultVersion: "latest",
  custom: {
    extract: pinned({ legacy: "1.0", current: "1.10", broken: "1", future: "3.0" }),
    vary: ["X-Tenant"],
  },
  deprecated: { "1.0": { deprecation: "2026-01-01T00:00:00Z", sunset: "2026-07-01T00:00:00Z" } },
};

const dates: ApiVersioningOptions = {
  ...common,
  versions: ["2026-11-25", "2024-06-01", "2025-01-15"],
  defaultVersion: "2025-01-15",
  custom: {
    extract: pinned({
      legacy: "2024-06-01",
      current: "2026-11-25",
      broken: "2026-02-30",
      future: "2030-01-01",
    }),
    vary: ["X-Tenant"],
  },
  deprecated: {
    "2024-06-01": {
      deprecation: "2025-01-15",
      sunset: "2026-06-01",
      sunsetLink: "https://example.com/versions/2024-06-01",
    },
  },
};

const pipelineOf = (options: ApiVersioningOptions) => () =>
  createPipeline({ representations: representations({ offers: [json] }), versioning: versions(options) });

const VARY = /^API-Version, X-Tenant, Accept$/i;

/** The error record's message (its `code` is the error handler's to write). */
const says = (message: RegExp) => (response: RowResponse) =>
  expect((JSON.parse(response.text) as { message: string }).message).toMatch(message);

const majorMinorRows: Row[] = [
  {
    name: "/v1.10/employees/7 → 1.10, supported versions in order",
    request: { path: "/v1.10/employees/7" },
    status: 200,
    headers: {
      vary: VARY,
      "api-supported-versions": "1.0, 1.9, 1.10, 2.0",
      "api-deprecated-versions": "1.0",
      deprecation: null,
    },
    body: { id: 7, version: "1.10" },
  },
  {
    name: "no version → the latest, 2.0",
    request: { path: "/employees/7" },
    status: 200,
    headers: { vary: VARY, deprecation: null },
    body: { id: 7, version: "2.0" },
  },
  {
    name: "API-Version: 1.9 → 1.9",
    request: { path: "/employees/7", headers: { "API-Version": "1.9" } },
    status: 200,
    body: { id: 7, version: "1.9" },
  },
  {
    name: "?api-version=1.0 → 1.0, deprecated with its sunset",
    request: { path: "/employees/7?api-version=1.0" },
    status: 200,
    headers: { deprecation: "@1767225600", sunset: "Wed, 01 Jul 2026 00:00:00 GMT" },
    body: { id: 7, version: "1.0" },
  },
  {
    name: "Accept: application/vnd.svc.v1.9+json → 1.9, labelled with that type",
    request: { path: "/employees/7", headers: { Accept: "application/vnd.svc.v1.9+json" } },
    status: 200,
    headers: { "content-type": /^application\/vnd\.svc\.v1\.9\+json/, vary: VARY },
    body: { id: 7, version: "1.9" },
  },
  {
    name: "X-Tenant: current → 1.10 by the custom extractor",
    request: { path: "/employees/7", headers: { "X-Tenant": "current" } },
    status: 200,
    body: { id: 7, version: "1.10" },
  },
  {
    name: "/v1.3/employees/7 → 404 unsupported_api_version",
    request: { path: "/v1.3/employees/7" },
    status: 404,
    headers: { "api-supported-versions": "1.0, 1.9, 1.10, 2.0" },
    body: says(
      /^API version 1\.3 \(path \/v1\.3\) is not supported; supported versions: 1\.0, 1\.9, 1\.10, 2\.0$/,
    ),
  },
  {
    name: "API-Version: 3.0 → 400 unsupported_api_version",
    request: { path: "/employees/7", headers: { "API-Version": "3.0" } },
    status: 400,
    headers: { vary: VARY },
    body: says(/^API version 3\.0 \(header API-Version\) is not supported/),
  },
  {
    name: "API-Version: 1 → 400 malformed_api_version (1 is not 1.0: one spelling per version)",
    request: { path: "/employees/7", headers: { "API-Version": "1" } },
    status: 400,
    body: says(/^Header API-Version must be one API version \(major\.minor, such as 1\.2\)$/),
  },
  {
    name: "?api-version=1.09 → 400 malformed_api_version",
    request: { path: "/employees/7?api-version=1.09" },
    status: 400,
    body: says(/^Query parameter api-version must be one API version \(major\.minor, such as 1\.2\)$/),
  },
  {
    name: 'X-Tenant: broken ("1") → 400 malformed_api_version',
    request: { path: "/employees/7", headers: { "X-Tenant": "broken" } },
    status: 400,
    body: says(/^The custom version extractor must read one API version/),
  },
  {
    name: "Accept: application/vnd.svc.v3.0+json → 406",
    request: { path: "/employees/7", headers: { Accept: "application/vnd.svc.v3.0+json" } },
    status: 406,
    body: says(/^API version 3\.0 \(media type application\/vnd\.svc\.v3\.0\+json\) is not supported/),
  },
  {
    name: "/v1.0/employees/7?api-version=2.0 → 400 conflicting_api_version",
    request: { path: "/v1.0/employees/7?api-version=2.0" },
    status: 400,
    body: says(
      /^The request names API version 1\.0 \(path \/v1\.0\) and 2\.0 \(query parameter api-version\)$/,
    ),
  },
  {
    name: "/v1/employees/7 → no version prefix of this scheme: the router's 404",
    request: { path: "/v1/employees/7" },
    status: 404,
  },
];

const dateRows: Row[] = [
  {
    name: "?api-version=2026-11-25 → 2026-11-25, supported versions in date order",
    request: { path: "/employees/7?api-version=2026-11-25" },
    status: 200,
    headers: {
      vary: VARY,
      "api-supported-versions": "2024-06-01, 2025-01-15, 2026-11-25",
      "api-deprecated-versions": "2024-06-01",
      deprecation: null,
    },
    body: { id: 7, version: "2026-11-25" },
  },
  {
    name: "no version → the configured default, 2025-01-15",
    request: { path: "/employees/7" },
    status: 200,
    body: { id: 7, version: "2025-01-15" },
  },
  {
    name: "/v2024-06-01/employees/7 → deprecated, with its Sunset and sunset Link",
    request: { path: "/v2024-06-01/employees/7" },
    status: 200,
    headers: {
      deprecation: "@1736899200",
      sunset: "Mon, 01 Jun 2026 00:00:00 GMT",
      link: '<https://example.com/versions/2024-06-01>; rel="sunset"',
    },
    body: { id: 7, version: "2024-06-01" },
  },
  {
    name: "API-Version: 2026-11-25 → 2026-11-25",
    request: { path: "/employees/7", headers: { "API-Version": "2026-11-25" } },
    status: 200,
    body: { id: 7, version: "2026-11-25" },
  },
  {
    name: "Accept: application/vnd.svc.v2024-06-01+json → 2024-06-01, labelled, deprecated",
    request: { path: "/employees/7", headers: { Accept: "application/vnd.svc.v2024-06-01+json" } },
    status: 200,
    headers: { "content-type": /^application\/vnd\.svc\.v2024-06-01\+json/, deprecation: "@1736899200" },
    body: { id: 7, version: "2024-06-01" },
  },
  {
    name: "X-Tenant: current → 2026-11-25 by the custom extractor",
    request: { path: "/employees/7", headers: { "X-Tenant": "current" } },
    status: 200,
    body: { id: 7, version: "2026-11-25" },
  },
  {
    name: "/v2026-02-30/employees/7 → 404 unsupported_api_version (spelled as a date, names none)",
    request: { path: "/v2026-02-30/employees/7" },
    status: 404,
    body: says(/^API version 2026-02-30 \(path \/v2026-02-30\) is not supported/),
  },
  {
    name: "API-Version: 2026-11-24 → 400 unsupported_api_version",
    request: { path: "/employees/7", headers: { "API-Version": "2026-11-24" } },
    status: 400,
    body: says(/^API version 2026-11-24 \(header API-Version\) is not supported/),
  },
  {
    name: "X-Tenant: future → 400 unsupported_api_version",
    request: { path: "/employees/7", headers: { "X-Tenant": "future" } },
    status: 400,
    body: says(/^API version 2030-01-01 \(custom extractor\) is not supported/),
  },
  {
    name: "API-Version: 2026-02-30 → 400 malformed_api_version",
    request: { path: "/employees/7", headers: { "API-Version": "2026-02-30" } },
    status: 400,
    body: says(/^Header API-Version must be one API version \(date, such as 2026-11-25\)$/),
  },
  {
    name: "?api-version=2026-11-25-preview → 400 malformed_api_version (no status suffixes)",
    request: { path: "/employees/7?api-version=2026-11-25-preview" },
    status: 400,
    body: says(/^Query parameter api-version must be one API version/),
  },
  {
    name: "Accept: application/vnd.svc.v2030-01-01+json → 406",
    request: { path: "/employees/7", headers: { Accept: "application/vnd.svc.v2030-01-01+json" } },
    status: 406,
  },
  {
    name: "API-Version: 2025-01-15 with ?api-version=2026-11-25 → 400 conflicting_api_version",
    request: { path: "/employees/7?api-version=2026-11-25", headers: { "API-Version": "2025-01-15" } },
    status: 400,
    body: says(
      /^The request names API version 2026-11-25 \(query parameter api-version\) and 2025-01-15 \(header API-Version\)$/,
    ),
  },
];

conformance(
  "@svc/versioning major.minor versions",
  () => employeeMounts(express, pipelineOf(majorMinor)),
  majorMinorRows,
);
conformance("@svc/versioning date versions", () => employeeMounts(express, pipelineOf(dates)), dateRows);
// Express 4: the same tables (the `express` mount is Express 4's).
conformance(
  "@svc/versioning major.minor versions, Express 4",
  () => employeeMounts(express4, pipelineOf(majorMinor)),
  majorMinorRows,
  ["express"],
);
conformance(
  "@svc/versioning date versions, Express 4",
  () => employeeMounts(express4, pipelineOf(dates)),
  dateRows,
  ["express"],
);

type DRow = DiagnosticRow<WithoutRequest<VersioningDiagnostic>>;

diagnosticsTable("svc:versioning", (seen) => employeeMounts(express, pipelineOf(majorMinor), seen), [
  {
    name: "/v1.10/... → chosen 1.10 by path",
    request: { path: "/v1.10/employees/7" },
    status: 200,
    message: { decision: "chosen", version: "1.10", strategy: "path", deprecated: false, sunset: false },
  },
  {
    name: "?api-version=1.0 → chosen 1.0 by query, deprecated with a sunset",
    request: { path: "/employees/7?api-version=1.0" },
    status: 200,
    message: { decision: "chosen", version: "1.0", strategy: "query", deprecated: true, sunset: true },
  },
  {
    name: "API-Version: 1 → malformed by header",
    request: { path: "/employees/7", headers: { "API-Version": "1" } },
    status: 400,
    message: { decision: "malformed", strategy: "header" },
  },
] satisfies DRow[]);

diagnosticsTable("svc:versioning", (seen) => employeeMounts(express, pipelineOf(dates), seen), [
  {
    name: "/v2026-02-30/... → unsupported 2026-02-30 by path",
    request: { path: "/v2026-02-30/employees/7" },
    status: 404,
    message: { decision: "unsupported", strategy: "path" },
  },
  {
    name: "Accept vnd.svc.v2024-06-01+json → chosen by media-type",
    request: { path: "/employees/7", headers: { Accept: "application/vnd.svc.v2024-06-01+json" } },
    status: 200,
    message: {
      decision: "chosen",
      version: "2024-06-01",
      strategy: "media-type",
      deprecated: true,
      sunset: true,
    },
  },
] satisfies DRow[]);
