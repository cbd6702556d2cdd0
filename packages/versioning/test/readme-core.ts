import { createServer } from "node:http";
import type { HttpError } from "@svc/errors";
import { createVersioning, type VersionResolution } from "@svc/versioning";

const versioning = createVersioning({
  versions: [1, 2],
  required: true,
  mediaType: { vendor: "svc" },
  deprecated: { 1: { deprecation: "2026-01-01T00:00:00Z", link: "https://docs.example.com/v1" } },
});

export const server = createServer((req, res) => {
  let v: VersionResolution;
  try {
    v = versioning.resolve(req); // a CORS preflight never fails for a missing version
  } catch (err) {
    const { status, headers, message } = err as HttpError; // 400, 404, 406 or 415
    versioning.writeHeaders(res); // API-Supported-Versions, Vary
    res.writeHead(status, { ...headers, "Content-Type": "text/plain" }).end(message);
    return;
  }
  versioning.writeHeaders(res, v); // Vary, vendor Content-Type, Deprecation, Link
  if (req.method === "OPTIONS") return void res.writeHead(204).end();
  if (v.url !== "/employees") return void res.writeHead(404).end();
  // The body is JSON: a `+xml` vendor label becomes the version's `+json` type (RFC 9110 §8.3).
  res.setHeader("Content-Type", v.mediaType?.replace(/\+xml$/, "+json") ?? "application/json");
  res.end(JSON.stringify({ version: v.version, self: `${v.pathPrefix}/employees` }));
});
