import {
  addOpenApiParameter,
  addOpenApiResponse,
  addOpenApiResponseHeaders,
  type OpenApiFragment,
  openApiErrorResponse,
  openApiRef,
} from "@svc/kernel";
import { checkBooleanOption, checkOptionNames } from "@svc/kernel/internal";
import { requiredMethodsOption } from "./options.js";

/** Options of {@link conditionalOpenApi}: those of `validators()` that change what a client sees. */
export interface ConditionalOpenApiOptions {
  /** As `validators({ required })`: writes without a precondition are a 428. @default false */
  required?: boolean;
  /** As `validators({ requiredMethods })`. @default ["PUT", "PATCH", "DELETE"] */
  requiredMethods?: readonly string[];
}

const OPTIONS = ["required", "requiredMethods"];
const READS = new Set(["get", "head"]);
const WRITES = new Set(["post", "put", "patch", "delete"]);

/**
 * The OpenAPI 3.1 fragment of `@svc/conditional`: the `ETag` header of what a read answers, the
 * `If-None-Match` parameter and its 304 on reads, the `If-Match` parameter on PUT, PATCH and
 * DELETE, the 412 of every read and write (a false `If-Match` or `If-Unmodified-Since` is refused
 * whatever the method), and the 428 of the writes `required` names.
 *
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-13.2.2 The order the preconditions are
 * evaluated in: `If-Match` (412) before `If-None-Match` (304 on a read).
 * @see https://www.rfc-editor.org/rfc/rfc6585#section-3 428 Precondition Required.
 */
export function conditionalOpenApi(options: ConditionalOpenApiOptions = {}): OpenApiFragment {
  checkOptionNames("conditional", options, OPTIONS, "conditionalOpenApi");
  checkBooleanOption("conditional", "required", options.required, "conditionalOpenApi: required");
  const required = options.required
    ? requiredMethodsOption(options.requiredMethods, "conditionalOpenApi")
    : undefined;
  const etag = { ETag: openApiRef("headers", "ETag") };
  return {
    source: "@svc/conditional",
    components: {
      headers: {
        ETag: { description: "Strong entity tag of the representation sent", schema: { type: "string" } },
      },
      parameters: {
        IfMatch: {
          name: "If-Match",
          in: "header",
          description:
            "`*` or the ETags the client holds (RFC 9110 §13.1.1); the request is served only while one of them is current, else 412. A malformed member of the list matches nothing",
          schema: { type: "string" },
        },
        IfNoneMatch: {
          name: "If-None-Match",
          in: "header",
          description:
            "`*` or the ETags the client holds (RFC 9110 §13.1.2): a 304 when one of them is current (any current representation for `*`), else the representation. A malformed member of the list matches nothing, so a value with no well-formed member never earns a 304",
          schema: { type: "string" },
        },
      },
      responses: {
        NotModified: {
          description: "Not modified: the `If-None-Match` tag is current (RFC 9110 §15.4.5)",
          headers: etag,
        },
        PreconditionFailed: openApiErrorResponse(
          "`If-Match` (or `If-Unmodified-Since`) does not match the current ETag",
        ),
        ...(required
          ? {
              PreconditionRequired: openApiErrorResponse(
                "The write carries no precondition (`If-Match`, `If-Unmodified-Since` or `If-None-Match`)",
              ),
            }
          : {}),
      },
    },
    operation({ method, operation }) {
      const responses = (operation.responses ?? {}) as Record<string, unknown>;
      const succeeds = Object.keys(responses).some((status) => status.startsWith("2"));
      if (READS.has(method)) {
        addOpenApiParameter(operation, openApiRef("parameters", "IfNoneMatch"), {
          name: "If-None-Match",
          in: "header",
        });
        if (succeeds) {
          addOpenApiResponseHeaders(operation, etag);
          addOpenApiResponse(operation, "304", openApiRef("responses", "NotModified"));
          addOpenApiResponse(operation, "412", openApiRef("responses", "PreconditionFailed"));
        }
        return;
      }
      if (!WRITES.has(method)) return;
      if (method !== "post")
        addOpenApiParameter(operation, openApiRef("parameters", "IfMatch"), {
          name: "If-Match",
          in: "header",
        });
      addOpenApiResponse(operation, "412", openApiRef("responses", "PreconditionFailed"));
      if (required?.has(method.toUpperCase()))
        addOpenApiResponse(operation, "428", openApiRef("responses", "PreconditionRequired"));
    },
  };
}
