import {
  addOpenApiParameter,
  addOpenApiResponse,
  addOpenApiResponseHeaders,
  type OpenApiFragment,
  type OpenApiOperationContext,
  openApiErrorResponse,
  openApiRef,
} from "@svc/kernel";
import { checkOptionNames, refusedOption } from "@svc/kernel/internal";

/** Options of {@link idempotencyOpenApi}. */
export interface IdempotencyOpenApiOptions {
  /** As the middleware's `methods`. @default ["POST"] */
  methods?: readonly string[];
  /** The operations the middleware is in front of. @default every operation of `methods` */
  applies?: (context: OpenApiOperationContext) => boolean;
  /** The operations that require a key (the middleware's `required`). @default none */
  required?: (context: OpenApiOperationContext) => boolean;
}

const OPTIONS = ["methods", "applies", "required"];

/**
 * The key as the middleware reads it: an RFC 8941 §3.3.3 String of 1 to 255 characters, or the
 * same key bare (printable ASCII without space, DQUOTE or comma), as clients send it.
 */
const KEY_SCHEMA = {
  type: "string",
  pattern: String.raw`^(?:[\x21\x23-\x2B\x2D-\x7E]{1,255}|"(?:[\x20\x21\x23-\x5B\x5D-\x7E]|\\[\x22\x5C]){1,255}")$`,
};
const KEY_TEXT =
  'The key is 1 to 255 characters, sent as a Structured Field String (`"…"`) or bare: printable ASCII without space, `"` or `,`';

function predicate(
  name: string,
  value: unknown,
): ((context: OpenApiOperationContext) => boolean) | undefined {
  if (value !== undefined && typeof value !== "function")
    throw refusedOption("idempotency", name, value, "a function", `idempotencyOpenApi: ${name}`);
  return value as ((context: OpenApiOperationContext) => boolean) | undefined;
}

/**
 * The OpenAPI 3.1 fragment of `@svc/idempotency`: the `Idempotency-Key` parameter of the methods
 * it guards, `Idempotent-Replayed` on their answers, the 409 of a request with the same key still
 * in flight and the 422 of a key reused with another payload.
 *
 * @see https://datatracker.ietf.org/doc/html/draft-ietf-httpapi-idempotency-key-header-06#section-2.7
 * The 409 and 422 a resource server answers for a concurrent or mismatched request.
 */
export function idempotencyOpenApi(options: IdempotencyOpenApiOptions = {}): OpenApiFragment {
  checkOptionNames("idempotency", options, OPTIONS, "idempotencyOpenApi");
  const list = options.methods ?? ["POST"];
  if (!Array.isArray(list) || list.length === 0 || list.some((m) => typeof m !== "string"))
    throw refusedOption(
      "idempotency",
      "methods",
      list,
      "a non-empty array of method names",
      "idempotencyOpenApi: methods",
    );
  const methods = new Set(list.map((m) => m.toLowerCase()));
  const applies = predicate("applies", options.applies) ?? (() => true);
  const required = predicate("required", options.required) ?? (() => false);
  const replayed = { "Idempotent-Replayed": openApiRef("headers", "IdempotentReplayed") };
  return {
    source: "@svc/idempotency",
    components: {
      parameters: {
        IdempotencyKey: {
          name: "Idempotency-Key",
          in: "header",
          description: `Makes the request safe to retry: a replay gets the stored response with \`Idempotent-Replayed: true\`. ${KEY_TEXT}`,
          schema: KEY_SCHEMA,
        },
        RequiredIdempotencyKey: {
          name: "Idempotency-Key",
          in: "header",
          required: true,
          description: `Required: a retry with the same key is never run twice. ${KEY_TEXT}`,
          schema: KEY_SCHEMA,
        },
      },
      headers: {
        IdempotentReplayed: {
          description: "`true` on a response replayed for a repeated `Idempotency-Key`",
          schema: { const: "true" },
        },
        RetryAfter: {
          description: "Seconds to wait before retrying",
          schema: { type: "integer", minimum: 0 },
        },
      },
      responses: {
        IdempotencyKeyInFlight: openApiErrorResponse(
          "A request with the same `Idempotency-Key` is still in flight",
          { "Retry-After": openApiRef("headers", "RetryAfter") },
        ),
        IdempotencyKeyReused: openApiErrorResponse("The `Idempotency-Key` was used with another payload"),
      },
    },
    operation(context) {
      if (!methods.has(context.method) || !applies(context)) return;
      const name = required(context) ? "RequiredIdempotencyKey" : "IdempotencyKey";
      addOpenApiParameter(context.operation, openApiRef("parameters", name), {
        name: "Idempotency-Key",
        in: "header",
      });
      addOpenApiResponseHeaders(context.operation, replayed);
      addOpenApiResponse(context.operation, "409", openApiRef("responses", "IdempotencyKeyInFlight"));
      addOpenApiResponse(context.operation, "422", openApiRef("responses", "IdempotencyKeyReused"));
    },
  };
}
