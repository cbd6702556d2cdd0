import {
  addOpenApiResponse,
  addOpenApiResponseHeaders,
  type OpenApiFragment,
  type OpenApiObject,
  type OpenApiOperationContext,
  openApiErrorResponse,
  openApiRef,
} from "@svc/kernel";
import { checkBooleanOption, checkOptionNames, checkOptionType } from "@svc/kernel/internal";
import { type RateLimitDraft, standardHeadersOf } from "./headers.js";

/** Options of {@link rateLimitOpenApi}: the limiter's header options, and which operations it guards. */
export interface RateLimitOpenApiOptions {
  /** As the limiter's `legacyHeaders`. @default true */
  legacyHeaders?: boolean;
  /** As the limiter's `standardHeaders`. @default true */
  standardHeaders?: boolean | RateLimitDraft;
  /** The operations the limiter is in front of. @default every operation */
  applies?: (context: OpenApiOperationContext) => boolean;
}

const OPTIONS = ["legacyHeaders", "standardHeaders", "applies"];
const integer = { type: "integer", minimum: 0 };

/** The fields the limiter writes on the responses it lets through, by component name. */
function fieldsOf(
  legacy: boolean,
  draft: RateLimitDraft | undefined,
): Array<[string, string, OpenApiObject]> {
  const fields: Array<[string, string, OpenApiObject]> = [];
  if (draft === "draft-6") {
    fields.push(...countFields("", "Seconds until the window resets"));
  } else if (draft === "draft-7") {
    fields.push([
      "RateLimit",
      "RateLimit",
      {
        description: "`limit`, `remaining` and `reset` (seconds) of the tightest quota",
        schema: { type: "string" },
      },
    ]);
  } else if (draft) {
    fields.push([
      "RateLimit",
      "RateLimit",
      {
        description:
          "What is left of each quota: a Structured Field List, `r` requests left, `t` seconds to reset",
        schema: { type: "string" },
      },
    ]);
  }
  if (draft)
    fields.push([
      "RateLimitPolicy",
      "RateLimit-Policy",
      {
        description: "The quota policies: a Structured Field List, `q` requests per `w` seconds",
        schema: { type: "string" },
      },
    ]);
  if (legacy) fields.push(...countFields("X-", "When the window resets"));
  return fields;
}

/**
 * The three count fields, draft 6's `RateLimit-Limit`, `-Remaining` and `-Reset`, or the legacy
 * `X-RateLimit-*` (`prefix` `"X-"`), by component name; `reset` says what the reset counts.
 */
function countFields(prefix: "" | "X-", reset: string): Array<[string, string, OpenApiObject]> {
  const described = {
    Limit: "Requests allowed per window",
    Remaining: "Requests left in this window",
    Reset: reset,
  };
  return Object.entries(described).map(([part, description]) => [
    `${prefix.replace("-", "")}RateLimit${part}`,
    `${prefix}RateLimit-${part}`,
    { description, schema: integer },
  ]);
}

/**
 * The OpenAPI 3.1 fragment of `@svc/ratelimit`: the quota fields of every answer the limiter lets
 * through, and its 429 with `Retry-After`.
 *
 * @see https://datatracker.ietf.org/doc/html/draft-ietf-httpapi-ratelimit-headers-10#section-3 The
 * `RateLimit-Policy` and `RateLimit` fields.
 * @see https://www.rfc-editor.org/rfc/rfc6585#section-4 429 Too Many Requests, with `Retry-After`.
 */
export function rateLimitOpenApi(options: RateLimitOpenApiOptions = {}): OpenApiFragment {
  checkOptionNames("ratelimit", options, OPTIONS, "rateLimitOpenApi");
  checkBooleanOption("ratelimit", "legacyHeaders", options.legacyHeaders, "rateLimitOpenApi: legacyHeaders");
  const standard = standardHeadersOf(options.standardHeaders, "rateLimitOpenApi");
  checkOptionType(
    "ratelimit",
    "applies",
    options.applies,
    "function",
    "a function",
    "rateLimitOpenApi: applies",
  );
  const fields = fieldsOf(
    options.legacyHeaders ?? true,
    standard === true ? "draft-10" : standard || undefined,
  );
  const headers: Record<string, OpenApiObject> = {
    RetryAfter: { description: "Seconds to wait before retrying", schema: { type: "integer", minimum: 0 } },
  };
  const onResponse: Record<string, OpenApiObject> = {};
  for (const [component, name, header] of fields) {
    headers[component] = header;
    onResponse[name] = openApiRef("headers", component);
  }
  const applies = options.applies ?? (() => true);
  return {
    source: "@svc/ratelimit",
    components: {
      headers,
      responses: {
        TooManyRequests: openApiErrorResponse("Rate limit exceeded", {
          "Retry-After": openApiRef("headers", "RetryAfter"),
          ...onResponse,
        }),
      },
    },
    operation(context) {
      if (!applies(context)) return;
      addOpenApiResponseHeaders(context.operation, onResponse);
      addOpenApiResponse(context.operation, "429", openApiRef("responses", "TooManyRequests"));
    },
  };
}
