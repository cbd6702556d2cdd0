import {
  addOpenApiResponse,
  addOpenApiResponseHeaders,
  type OpenApiFragment,
  type OpenApiObject,
  type OpenApiOperationContext,
  openApiErrorResponse,
  openApiRef,
} from "@svc/kernel";
import { checkBooleanOption, checkOptionNames, refusedOption } from "@svc/kernel/internal";
import { RATELIMIT_DRAFTS, type RateLimitDraft } from "./headers.js";

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
    fields.push(
      ["RateLimitLimit", "RateLimit-Limit", { description: "Requests allowed per window", schema: integer }],
      [
        "RateLimitRemaining",
        "RateLimit-Remaining",
        { description: "Requests left in this window", schema: integer },
      ],
      [
        "RateLimitReset",
        "RateLimit-Reset",
        { description: "Seconds until the window resets", schema: integer },
      ],
    );
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
  if (legacy)
    fields.push(
      [
        "XRateLimitLimit",
        "X-RateLimit-Limit",
        { description: "Requests allowed per window", schema: integer },
      ],
      [
        "XRateLimitRemaining",
        "X-RateLimit-Remaining",
        { description: "Requests left in this window", schema: integer },
      ],
      ["XRateLimitReset", "X-RateLimit-Reset", { description: "When the window resets", schema: integer }],
    );
  return fields;
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
  const standard = options.standardHeaders ?? true;
  if (typeof standard !== "boolean" && !RATELIMIT_DRAFTS.includes(standard))
    throw refusedOption(
      "ratelimit",
      "standardHeaders",
      standard,
      `true, false or one of ${RATELIMIT_DRAFTS.join(", ")}`,
      "rateLimitOpenApi: standardHeaders",
    );
  if (options.applies !== undefined && typeof options.applies !== "function")
    throw refusedOption("ratelimit", "applies", options.applies, "a function", "rateLimitOpenApi: applies");
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
