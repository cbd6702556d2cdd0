import { describeOptions, type OptionCase } from "@svc/test-utils";
import { preconditions } from "../src/express.js";
import { formatCacheControl, validators } from "../src/index.js";

const current = () => ({ etag: '"v1"' });

const rows: OptionCase[] = [
  // validators (the pipeline step)
  [
    "validators(options)",
    () => validators("no-cache" as never),
    "ERR_SVC_CONDITIONAL_OPTIONS",
    /validators: options must be an object with the fields defaultCacheControl, required, requiredMethods, writeMatch, got "no-cache"/,
    () => validators(),
  ],
  [
    "validators: unknown name",
    () => validators({ cacheControl: "no-cache" } as never),
    "ERR_SVC_CONDITIONAL_UNKNOWN_OPTION",
    /validators: unknown option "cacheControl"; options must be an object with the fields defaultCacheControl, required, requiredMethods, writeMatch/,
    () => validators({ defaultCacheControl: "no-cache" }),
  ],
  [
    "validators: defaultCacheControl",
    () => validators({ defaultCacheControl: true as never }),
    "ERR_SVC_CONDITIONAL_DEFAULT_CACHE_CONTROL",
    /validators: defaultCacheControl must be a non-empty string or false, got true/,
    () => validators({ defaultCacheControl: false }),
  ],
  [
    "validators: required",
    () => validators({ required: "true" as never }),
    "ERR_SVC_CONDITIONAL_REQUIRED",
    /validators: required must be true or false, got "true"/,
    () => validators({ required: false }),
  ],
  [
    "validators: requiredMethods (not tokens)",
    () => validators({ requiredMethods: ["PUT, PATCH"] }),
    "ERR_SVC_CONDITIONAL_REQUIRED_METHODS",
    /validators: requiredMethods must be a list of method names \(RFC 9110 §9.1 tokens\), got \["PUT, PATCH"\]/,
    () => validators({ requiredMethods: ["PUT", "PATCH"] }),
  ],
  // preconditions
  [
    "preconditions(options)",
    () => preconditions([] as never),
    "ERR_SVC_CONDITIONAL_OPTIONS",
    /preconditions: options must be an object with the fields current, required, requiredMethods, got \[\]/,
    () => preconditions({ current }),
  ],
  [
    "preconditions: unknown name",
    () => preconditions({ current, require: true } as never),
    "ERR_SVC_CONDITIONAL_UNKNOWN_OPTION",
    /preconditions: unknown option "require" \(did you mean "required"\?\)/,
    () => preconditions({ current, required: true }),
  ],
  [
    "preconditions: current",
    () => preconditions({ current: { etag: '"v1"' } as never }),
    "ERR_SVC_CONDITIONAL_CURRENT",
    /preconditions: current must be a function returning the current validators, got an object/,
    () => preconditions({ current }),
  ],
  [
    "preconditions: required",
    () => preconditions({ current, required: "true" as never }),
    "ERR_SVC_CONDITIONAL_REQUIRED",
    /preconditions: required must be true or false, got "true"/,
    () => preconditions({ current, required: false }),
  ],
  [
    "preconditions: requiredMethods",
    () => preconditions({ current, requiredMethods: "PUT" as never }),
    "ERR_SVC_CONDITIONAL_REQUIRED_METHODS",
    /preconditions: requiredMethods must be a list of method names \(RFC 9110 §9.1 tokens\), got "PUT"/,
    () => preconditions({ current, requiredMethods: ["PUT"] }),
  ],
  [
    "preconditions: requiredMethods (not tokens)",
    () => preconditions({ current, requiredMethods: ["PUT, PATCH"] }),
    "ERR_SVC_CONDITIONAL_REQUIRED_METHODS",
    /got \["PUT, PATCH"\]/,
    () => preconditions({ current, requiredMethods: ["PUT", "PATCH"] }),
  ],
  // formatCacheControl
  [
    "formatCacheControl(options)",
    () => formatCacheControl("public" as never),
    "ERR_SVC_CONDITIONAL_OPTIONS",
    /cacheControl: options must be an object of directives, got "public"/,
    () => formatCacheControl({ visibility: "public" }),
  ],
  [
    "cacheControl: no directive",
    () => formatCacheControl({}),
    "ERR_SVC_CONDITIONAL_OPTIONS",
    /cacheControl: options must name at least one directive/,
    () => formatCacheControl({ noCache: true }),
  ],
  [
    "cacheControl: unknown name",
    () => formatCacheControl({ maxage: 60 } as never),
    "ERR_SVC_CONDITIONAL_UNKNOWN_OPTION",
    /cacheControl: unknown option "maxage" \(did you mean "maxAge"\?\)/,
    () => formatCacheControl({ maxAge: 60 }),
  ],
  [
    "cacheControl: visibility",
    () => formatCacheControl({ visibility: "shared" as never }),
    "ERR_SVC_CONDITIONAL_VISIBILITY",
    /cacheControl: visibility must be "public" or "private", got "shared"/,
    () => formatCacheControl({ visibility: "private" }),
  ],
  [
    "cacheControl: maxAge",
    () => formatCacheControl({ maxAge: "60" as never }),
    "ERR_SVC_CONDITIONAL_MAX_AGE",
    /cacheControl: maxAge must be a non-negative integer of seconds \(max-age\), got "60"/,
    () => formatCacheControl({ maxAge: 0 }),
  ],
  [
    "cacheControl: sMaxAge",
    () => formatCacheControl({ sMaxAge: -1 }),
    "ERR_SVC_CONDITIONAL_S_MAX_AGE",
    /cacheControl: sMaxAge must be a non-negative integer of seconds \(s-maxage\), got -1/,
    () => formatCacheControl({ sMaxAge: 60 }),
  ],
  [
    "cacheControl: staleWhileRevalidate",
    () => formatCacheControl({ staleWhileRevalidate: 1.5 }),
    "ERR_SVC_CONDITIONAL_STALE_WHILE_REVALIDATE",
    /cacheControl: staleWhileRevalidate must be a non-negative integer of seconds \(stale-while-revalidate\), got 1.5/,
    () => formatCacheControl({ staleWhileRevalidate: 30 }),
  ],
  [
    "cacheControl: noCache",
    () => formatCacheControl({ noCache: "yes" as never }),
    "ERR_SVC_CONDITIONAL_NO_CACHE",
    /cacheControl: noCache must be true or false, got "yes"/,
    () => formatCacheControl({ noCache: true }),
  ],
  [
    "cacheControl: noStore",
    () => formatCacheControl({ noStore: 1 as never }),
    "ERR_SVC_CONDITIONAL_NO_STORE",
    /cacheControl: noStore must be true or false, got 1/,
    () => formatCacheControl({ noStore: true }),
  ],
  [
    "cacheControl: noStore with maxAge",
    () => formatCacheControl({ noStore: true, maxAge: 60 }),
    "ERR_SVC_CONDITIONAL_NO_STORE",
    /cacheControl: noStore must be false when maxAge, sMaxAge or immutable is set, got true/,
    () => formatCacheControl({ noStore: false, maxAge: 60 }),
  ],
  [
    "cacheControl: mustRevalidate",
    () => formatCacheControl({ mustRevalidate: "true" as never }),
    "ERR_SVC_CONDITIONAL_MUST_REVALIDATE",
    /cacheControl: mustRevalidate must be true or false, got "true"/,
    () => formatCacheControl({ mustRevalidate: true }),
  ],
  [
    "cacheControl: immutable",
    () => formatCacheControl({ maxAge: 60, immutable: null as never }),
    "ERR_SVC_CONDITIONAL_IMMUTABLE",
    /cacheControl: immutable must be true or false, got null/,
    () => formatCacheControl({ maxAge: 60, immutable: true }),
  ],
  [
    "cacheControl: noTransform",
    () => formatCacheControl({ noTransform: [] as never }),
    "ERR_SVC_CONDITIONAL_NO_TRANSFORM",
    /cacheControl: noTransform must be true or false, got \[\]/,
    () => formatCacheControl({ noTransform: true }),
  ],
  [
    "formatCacheControl: same checks",
    () => formatCacheControl({ mustRevalidte: true } as never),
    "ERR_SVC_CONDITIONAL_UNKNOWN_OPTION",
    /unknown option "mustRevalidte" \(did you mean "mustRevalidate"\?\)/,
    () => formatCacheControl({ mustRevalidate: true }),
  ],
];

describeOptions("@svc/conditional: every option refused at construction with a stable code", rows);
