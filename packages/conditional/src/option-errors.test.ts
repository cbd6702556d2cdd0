import { describe, expect, it } from "vitest";
import { preconditions } from "./express.js";
import { formatCacheControl, validators } from "./index.js";

/**
 * Every option @svc/conditional refuses at construction: a `TypeError` naming the option, what was
 * given and what is accepted, with the stable code `ERR_SVC_CONDITIONAL_<OPTION>`.
 */
describe("refused options", () => {
  const current = () => undefined;
  it.each([
    [
      "validators: defaultCacheControl",
      () => validators({ defaultCacheControl: " " }),
      'validators: defaultCacheControl must be a non-empty string or false, got " "',
      "ERR_SVC_CONDITIONAL_DEFAULT_CACHE_CONTROL",
    ],
    [
      "validators: defaultCacheControl (not a string)",
      () => validators({ defaultCacheControl: true as never }),
      "validators: defaultCacheControl must be a non-empty string or false, got true",
      "ERR_SVC_CONDITIONAL_DEFAULT_CACHE_CONTROL",
    ],
    [
      "validators: writeMatch",
      () => validators({ writeMatch: "first" as never }),
      'validators: writeMatch must be "any" or "selected", got "first"',
      "ERR_SVC_CONDITIONAL_WRITE_MATCH",
    ],
    [
      "preconditions: current",
      () => preconditions({} as never),
      "preconditions: current must be a function returning the current validators, got undefined",
      "ERR_SVC_CONDITIONAL_CURRENT",
    ],
    [
      "preconditions: requiredMethods (not a list)",
      () => preconditions({ current, requiredMethods: "PUT" as never }),
      'preconditions: requiredMethods must be a list of method names (RFC 9110 §9.1 tokens), got "PUT"',
      "ERR_SVC_CONDITIONAL_REQUIRED_METHODS",
    ],
    [
      "preconditions: requiredMethods (not names)",
      () => preconditions({ current, requiredMethods: ["PUT", 7 as never] }),
      'preconditions: requiredMethods must be a list of method names (RFC 9110 §9.1 tokens), got ["PUT", 7]',
      "ERR_SVC_CONDITIONAL_REQUIRED_METHODS",
    ],
    [
      "cacheControl: visibility",
      () => formatCacheControl({ visibility: "shared" as never }),
      'cacheControl: visibility must be "public" or "private", got "shared"',
      "ERR_SVC_CONDITIONAL_VISIBILITY",
    ],
    [
      "cacheControl: maxAge",
      () => formatCacheControl({ maxAge: -1 }),
      "cacheControl: maxAge must be a non-negative integer of seconds (max-age), got -1",
      "ERR_SVC_CONDITIONAL_MAX_AGE",
    ],
    [
      "cacheControl: sMaxAge",
      () => formatCacheControl({ sMaxAge: 1.5 }),
      "cacheControl: sMaxAge must be a non-negative integer of seconds (s-maxage), got 1.5",
      "ERR_SVC_CONDITIONAL_S_MAX_AGE",
    ],
    [
      "cacheControl: staleWhileRevalidate",
      () => formatCacheControl({ maxAge: 60, staleWhileRevalidate: Number.NaN }),
      "cacheControl: staleWhileRevalidate must be a non-negative integer of seconds (stale-while-revalidate), got NaN",
      "ERR_SVC_CONDITIONAL_STALE_WHILE_REVALIDATE",
    ],
    [
      "cacheControl: noStore with maxAge",
      () => formatCacheControl({ noStore: true, maxAge: 5 }),
      "cacheControl: noStore must be false when maxAge, sMaxAge or immutable is set, got true",
      "ERR_SVC_CONDITIONAL_NO_STORE",
    ],
    [
      "cacheControl: no directive",
      () => formatCacheControl({ noCache: false }),
      "cacheControl: options must name at least one directive (visibility, maxAge, noCache, noStore, ...), got none",
      "ERR_SVC_CONDITIONAL_OPTIONS",
    ],
    [
      "cacheControl: options not an object",
      () => formatCacheControl(null as never),
      "cacheControl: options must be an object of directives, got null",
      "ERR_SVC_CONDITIONAL_OPTIONS",
    ],
  ])("%s", (_name, construct, message, code) => {
    let thrown: unknown;
    try {
      construct();
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(TypeError);
    expect(thrown).toMatchObject({ message, code });
  });
});
