import { createPipeline } from "@svc/kernel";
import { json, representations } from "@svc/negotiate";
import { type DiagnosticRow, diagnosticsTable } from "@svc/test-utils/conformance";
import express from "express";
import { type VersioningDiagnostic, versions } from "../src/index.js";
import { employeeMounts } from "./employee-mounts.js";

/** A message's members but its `request`, for each kind of message. */
type WithoutRequest<T> = T extends unknown ? Omit<T, "request"> : never;

// One table over every framework: the version each request got (or its refusal) on the wire,
// and the one message on `svc:versioning` naming the request the framework was handed. The
// version is decided before routing: on Fastify that is in `rewriteUrl`, before Fastify makes
// its `request`, so the message names `request.raw` (the object the pipeline keys the exchange
// by; `exchangeOf` gives the same exchange for either).

const pipeline = () =>
  createPipeline({
    representations: representations({ offers: [json] }),
    versioning: versions({
      versions: [1, 2],
      defaultVersion: 2,
      uri: true,
      header: true,
      mediaType: { vendor: "svc" },
      deprecated: { 1: { deprecation: "2026-01-01T00:00:00Z", sunset: "2026-07-01T00:00:00Z" } },
    }),
  });

const mounts = (seen: object[] = []) => employeeMounts(express, pipeline, seen);

type Row = DiagnosticRow<WithoutRequest<VersioningDiagnostic>>;

const rows: Row[] = [
  {
    name: "GET /v2/employees/7 → 200, version 2 chosen by path",
    request: { path: "/v2/employees/7" },
    status: 200,
    message: { decision: "chosen", version: "2", strategy: "path", deprecated: false, sunset: false },
  },
  {
    name: "GET /v1/employees/7 → 200, version 1 chosen by path, deprecated with a sunset",
    request: { path: "/v1/employees/7" },
    status: 200,
    message: { decision: "chosen", version: "1", strategy: "path", deprecated: true, sunset: true },
  },
  {
    name: "API-Version: 1 → 200, version 1 chosen by header",
    request: { path: "/employees/7", headers: { "API-Version": "1" } },
    status: 200,
    message: { decision: "chosen", version: "1", strategy: "header", deprecated: true, sunset: true },
  },
  {
    name: "Accept: application/vnd.svc.v2+json → 200, version 2 chosen by media type",
    request: { path: "/employees/7", headers: { Accept: "application/vnd.svc.v2+json" } },
    status: 200,
    message: { decision: "chosen", version: "2", strategy: "media-type", deprecated: false, sunset: false },
  },
  {
    name: "no version → 200, the default chosen",
    request: { path: "/employees/7" },
    status: 200,
    message: { decision: "chosen", version: "2", strategy: "default", deprecated: false, sunset: false },
  },
  {
    name: "GET /v9/employees/7 → 404, version 9 unsupported",
    request: { path: "/v9/employees/7" },
    status: 404,
    message: { decision: "unsupported", strategy: "path" },
  },
  {
    name: "API-Version: 9 → 400, version 9 unsupported",
    request: { path: "/employees/7", headers: { "API-Version": "9" } },
    status: 400,
    message: { decision: "unsupported", strategy: "header" },
  },
];

diagnosticsTable("svc:versioning", mounts, rows);
