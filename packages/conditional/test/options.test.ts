import { describeOptions, type OptionCase } from "@svc/test-utils";
import { cacheControl, conditional, formatCacheControl, preconditions } from "../src/index.js";

const current = () => ({ etag: '"v1"' });

const rows: OptionCase[] = [
  // conditional
  [
    "conditional(options)",
    () => conditional("no-cache" as never),
    "ERR_SVC_CONDITIONAL_OPTIONS",
    /conditional: options must be an object with the fields defaultCacheControl, got "no-cache"/,
    () => conditional(),
  ],
  [
    "conditional: unknown name",
    () => conditional({ cacheControl: "no-cache" } as never),
    "ERR_SVC_CONDITIONAL_UNKNOWN_OPTION",
    /conditional: unknown option "cacheControl"; options must be an object with the fields defaultCacheControl/,
    () => conditional({ defaultCacheControl: "no-cache" }),
  ],
  [
    "conditional: defaultCacheControl",
    () => conditional({ defaultCacheControl: true as never }),
    "ERR_SVC_CONDITIONAL_DEFAULT_CACHE_CONTROL",
    /conditional: defaultCacheControl must be a non-empty string or false, got true/,
    () => conditional({ defaultCacheControl: false }),
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
  // cacheControl / formatCacheControl
  [
    "cacheControl(options)",
    () => cacheControl("public" as never),
    "ERR_SVC_CONDITIONAL_OPTIONS",
    /cacheControl: options must be an object of directives, got "public"/,
    () => cacheControl({ visibility: "public" }),
  ],
  [
    "cacheControl: no directive",
    () => cacheControl({}),
    "ERR_SVC_CONDITIONAL_OPTIONS",
    /cacheControl: options must name at least one directive/,
    () => cacheControl({ noCache: true }),
  ],
  [
    "cacheControl: unknown name",
    () => cacheControl({ maxage: 60 } as never),
    "ERR_SVC_CONDITIONAL_UNKNOWN_OPTION",
    /cacheControl: unknown option "maxage" \(did you mean "maxAge"\?\)/,
    () => cacheControl({ maxAge: 60 }),
  ],
  [
    "cacheControl: visibility",
    () => cacheControl({ visibility: "shared" as never }),
    "ERR_SVC_CONDITIONAL_VISIBILITY",
    /cacheControl: visibility must be "public" or "private", got "shared"/,
    () => cacheControl({ visibility: "private" }),
  ],
  [
    "cacheControl: maxAge",
    () => cacheControl({ maxAge: "60" as never }),
    "ERR_SVC_CONDITIONAL_MAX_AGE",
    /cacheControl: maxAge must be a non-negative integer of seconds \(max-age\), got "60"/,
    () => cacheControl({ maxAge: 0 }),
  ],
  [
    "cacheControl: sMaxAge",
    () => cacheControl({ sMaxAge: -1 }),
    "ERR_SVC_CONDITIONAL_S_MAX_AGE",
    /cacheControl: sMaxAge must be a non-negative integer of seconds \(s-maxage\), got -1/,
    () => cacheControl({ sMaxAge: 60 }),
  ],
  [
    "cacheControl: staleWhileRevalidate",
    () => cacheControl({ staleWhileRevalidate: 1.5 }),
    "ERR_SVC_CONDITIONAL_STALE_WHILE_REVALIDATE",
    /cacheControl: staleWhileRevalidate must be a non-negative integer of seconds \(stale-while-revalidate\), got 1.5/,
    () => cacheControl({ staleWhileRevalidate: 30 }),
  ],
  [
    "cacheControl: noCache",
    () => cacheControl({ noCache: "yes" as never }),
    "ERR_SVC_CONDITIONAL_NO_CACHE",
    /cacheControl: noCache must be true or false, got "yes"/,
    () => cacheControl({ noCache: true }),
  ],
  [
    "cacheControl: noStore",
    () => cacheControl({ noStore: 1 as never }),
    "ERR_SVC_CONDITIONAL_NO_STORE",
    /cacheControl: noStore must be true or false, got 1/,
    () => cacheControl({ noStore: true }),
  ],
  [
    "cacheControl: noStore with maxAge",
    () => cacheControl({ noStore: true, maxAge: 60 }),
    "ERR_SVC_CONDITIONAL_NO_STORE",
    /cacheControl: noStore must be false when maxAge, sMaxAge or immutable is set, got true/,
    () => cacheControl({ noStore: false, maxAge: 60 }),
  ],
  [
    "cacheControl: mustRevalidate",
    () => cacheControl({ mustRevalidate: "true" as never }),
    "ERR_SVC_CONDITIONAL_MUST_REVALIDATE",
    /cacheControl: mustRevalidate must be true or false, got "true"/,
    () => cacheControl({ mustRevalidate: true }),
  ],
  [
    "cacheControl: immutable",
    () => cacheControl({ maxAge: 60, immutable: null as never }),
    "ERR_SVC_CONDITIONAL_IMMUTABLE",
    /cacheControl: immutable must be true or false, got null/,
    () => cacheControl({ maxAge: 60, immutable: true }),
  ],
  [
    "cacheControl: noTransform",
    () => cacheControl({ noTransform: [] as never }),
    "ERR_SVC_CONDITIONAL_NO_TRANSFORM",
    /cacheControl: noTransform must be true or false, got \[\]/,
    () => cacheControl({ noTransform: true }),
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
