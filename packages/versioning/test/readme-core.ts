import { createServer } from "node:http";
import { pipelineRequest } from "@svc/kernel/node";
import { versions } from "@svc/versioning";

const versioning = versions({
  versions: [1, 2],
  required: true,
  mediaType: { vendor: "svc" },
  deprecated: { 1: { deprecation: "2026-01-01T00:00:00Z", link: "https://docs.example.com/v1" } },
});

export const server = createServer((req, res) => {
  // A CORS preflight never fails for a missing version.
  const v = versioning.resolve(pipelineRequest(req), req.url ?? "/");
  // API-Supported-Versions on every answer; Deprecation, Sunset and Link for a deprecated version.
  for (const [name, value] of Object.entries(v.fields)) if (value !== null) res.setHeader(name, value);
  if (v.vary.length > 0) res.setHeader("Vary", v.vary.join(", "));
  if (v.error !== undefined) {
    const { status, headers, message } = v.error; // 400, 404, 406 or 415
    res.writeHead(status, { ...headers, "Content-Type": "text/plain" }).end(message);
    return;
  }
  if (req.method === "OPTIONS") return void res.writeHead(204).end();
  if (v.target !== "/employees") return void res.writeHead(404).end();
  // The body is JSON: a `+xml` vendor label becomes the version's `+json` type (RFC 9110 §8.3).
  res.setHeader("Content-Type", v.label?.replace(/\+xml$/, "+json") ?? "application/json");
  res.end(JSON.stringify({ version: v.version, self: `${v.prefix}/employees` }));
});
