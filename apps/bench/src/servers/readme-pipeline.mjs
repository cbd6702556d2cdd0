// What the three packages-* servers (Express, Fastify, Hono) share, as a team would write it once:
// the response pipeline of @svc/kernel's README ("The pipeline") with its steps from the packages
// that own them, and @svc/auth's Bearer options. Each server hands them to its framework's entries.
import { validators } from "@svc/conditional";
import { halJson } from "@svc/hal";
import { createPipeline } from "@svc/kernel";
import { compression, json, representations, xml } from "@svc/negotiate";
import { versions } from "@svc/versioning";
import { JWT_AUDIENCE, JWT_ISSUER } from "../fixtures.mjs";

/**
 * One pipeline, run in the kernel's fixed order (version, representation, coding decision,
 * validators, preconditions, coding, one write) whatever order its steps are given in.
 */
export function readmePipeline() {
  return createPipeline({
    // @svc/versioning: URI prefix, version headers and the vendor media type; no version named → 1.
    versioning: versions({ versions: [1, 2], defaultVersion: 1, mediaType: { vendor: "svc" } }),
    // @svc/negotiate + @svc/hal ("With @svc/negotiate"): JSON, HAL and XML.
    representations: representations({ offers: [json, halJson, xml] }),
    // @svc/negotiate: content coding from 1 KiB.
    coding: compression({ threshold: 1024 }),
    // @svc/conditional: strong ETags per representation, preconditions, the default Cache-Control.
    validators: validators(),
  });
}

/** @svc/auth: Bearer JWTs (ES256, the bench's one public key), issuer and audience checked. */
export const readmeAuth = {
  realm: "employees",
  bearer: {
    key: JSON.parse(process.env.BENCH_JWK ?? "null"),
    algorithms: ["ES256"],
    issuer: JWT_ISSUER,
    audience: JWT_AUDIENCE,
  },
};
