import {
  addOpenApiResponse,
  type OpenApiFragment,
  type OpenApiOperationContext,
  openApiErrorResponse,
  openApiRef,
} from "@svc/kernel";
import { checkOptionNames, checkOptionType } from "@svc/kernel/internal";

/** Options of {@link negotiateOpenApi}. */
export interface NegotiateOpenApiOptions {
  /** The body limit as the document says it (`"100 KiB"`), named in the 413. */
  bodyLimit?: string;
  /** The operations whose representation is negotiated (406). @default every operation */
  negotiated?: (context: OpenApiOperationContext) => boolean;
  /**
   * The operations that read a request body (413, 415): a DELETE whose body is refused too, say.
   * @default those with a `requestBody`
   */
  bodies?: (context: OpenApiOperationContext) => boolean;
}

const OPTIONS = ["bodyLimit", "negotiated", "bodies"];

/**
 * The OpenAPI 3.1 fragment of `@svc/negotiate`: the 406 of a negotiated operation, and the 413 and
 * 415 of an operation that reads a body, with the field that names what the method accepts.
 *
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-15.5.16 A 415 may name the accepted media
 * types: `Accept-Post` for a POST (W3C LDP §7.1), `Accept-Patch` for a PATCH (RFC 5789 §3.1).
 */
export function negotiateOpenApi(options: NegotiateOpenApiOptions = {}): OpenApiFragment {
  checkOptionNames("negotiate", options, OPTIONS, "negotiateOpenApi");
  checkOptionType(
    "negotiate",
    "bodyLimit",
    options.bodyLimit,
    "string",
    "a string",
    "negotiateOpenApi: bodyLimit",
  );
  checkOptionType(
    "negotiate",
    "negotiated",
    options.negotiated,
    "function",
    "a function",
    "negotiateOpenApi: negotiated",
  );
  checkOptionType(
    "negotiate",
    "bodies",
    options.bodies,
    "function",
    "a function",
    "negotiateOpenApi: bodies",
  );
  const negotiated = options.negotiated ?? (() => true);
  const bodies =
    options.bodies ?? ((context: OpenApiOperationContext) => context.operation.requestBody !== undefined);
  const unsupported = "The request body's media type is not one the operation takes";
  return {
    source: "@svc/negotiate",
    components: {
      headers: {
        AcceptPost: { description: "The media types a POST may carry", schema: { type: "string" } },
        AcceptPatch: { description: "The media types a PATCH may carry", schema: { type: "string" } },
      },
      responses: {
        NotAcceptable: openApiErrorResponse(
          "None of the representations the operation has is acceptable (`Accept`)",
        ),
        ContentTooLarge: openApiErrorResponse(
          options.bodyLimit
            ? `The request body exceeds ${options.bodyLimit}`
            : "The request body is too large",
        ),
        UnsupportedMediaType: openApiErrorResponse(unsupported, {
          "Accept-Post": openApiRef("headers", "AcceptPost"),
        }),
        UnsupportedMediaTypePatch: openApiErrorResponse(unsupported, {
          "Accept-Patch": openApiRef("headers", "AcceptPatch"),
        }),
        UnsupportedMediaTypeOther: openApiErrorResponse(unsupported),
      },
    },
    operation(context) {
      const { method, operation } = context;
      if (negotiated(context)) addOpenApiResponse(operation, "406", openApiRef("responses", "NotAcceptable"));
      if (!bodies(context)) return;
      addOpenApiResponse(operation, "413", openApiRef("responses", "ContentTooLarge"));
      const which =
        method === "post"
          ? "UnsupportedMediaType"
          : method === "patch"
            ? "UnsupportedMediaTypePatch"
            : "UnsupportedMediaTypeOther";
      addOpenApiResponse(operation, "415", openApiRef("responses", which));
    },
  };
}
