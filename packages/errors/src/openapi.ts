import { type OpenApiFragment, type OpenApiObject, openApiRef } from "@svc/kernel";

/** Options of {@link errorsOpenApi}: which of the error's representations the server writes. */
export interface ErrorsOpenApiOptions {
  /**
   * RFC 9457 problem details for `Accept: application/problem+json` (and `+xml` with `xml`).
   * @default true
   */
  problem?: boolean;
  /** The error record in XML (`application/xml`, `text/xml`). @default true */
  xml?: boolean;
}

const str = { type: "string" } as const;
const dateTime = { type: "string", format: "date-time" } as const;

/**
 * The `errors` member, an array that XML writes as `<errors><error>…</error></errors>`.
 *
 * @see https://spec.openapis.org/oas/v3.1.0#xml-object Without `wrapped` an array is described as
 * repeated elements with no wrapper, which is not what the XML representation writes.
 */
const fieldErrors = {
  type: "array",
  description: "One entry per field at fault (validation errors only)",
  items: {
    type: "object",
    required: ["field", "message"],
    properties: { field: str, message: str },
    additionalProperties: false,
    xml: { name: "error" },
  },
  xml: { wrapped: true },
};

/**
 * The OpenAPI 3.1 fragment of the error record: the `ErrorRecord` and `ProblemDetails` schemas and
 * the content of every error response, which each package's refusals (`openApiErrorResponse` of
 * `@svc/kernel`) get when the document is composed with `composeOpenApi`.
 *
 * @see https://www.rfc-editor.org/rfc/rfc9457#section-3 The members of problem details.
 * @see https://www.rfc-editor.org/rfc/rfc9457#appendix-B Its XML form: `<problem>` in the
 * `urn:ietf:rfc:7807` namespace.
 */
export function errorsOpenApi(options: ErrorsOpenApiOptions = {}): OpenApiFragment {
  const problem = options.problem ?? true;
  const xml = options.xml ?? true;
  const schemas: Record<string, OpenApiObject> = {
    ErrorRecord: {
      type: "object",
      description: "The error record; in XML the same fields under `<error>`",
      required: ["timestamp", "status", "error", "message", "path"],
      properties: {
        timestamp: dateTime,
        status: { type: "integer", minimum: 400, maximum: 599 },
        error: { type: "string", description: "The reason phrase of the status" },
        message: { type: "string", description: "Human-readable; never an exception's text for a 5xx" },
        path: { type: "string", description: "The request path, without the query string" },
        errors: fieldErrors,
      },
      additionalProperties: false,
    },
  };
  if (problem)
    schemas.ProblemDetails = {
      type: "object",
      description: "The same error as RFC 9457 problem details, for `Accept: application/problem+json`",
      required: ["type", "title", "status", "detail", "instance", "timestamp"],
      properties: {
        type: str,
        title: str,
        status: { type: "integer", minimum: 400, maximum: 599 },
        detail: str,
        instance: str,
        timestamp: dateTime,
        code: str,
        errors: fieldErrors,
      },
      additionalProperties: true,
    };
  const record = openApiRef("schemas", "ErrorRecord");
  const inXml = (schema: OpenApiObject, root: OpenApiObject) => ({ schema: { allOf: [schema], xml: root } });
  const errorContent: OpenApiObject = { "application/json": { schema: record } };
  if (problem) errorContent["application/problem+json"] = { schema: openApiRef("schemas", "ProblemDetails") };
  if (xml) {
    errorContent["application/xml"] = inXml(record, { name: "error" });
    errorContent["text/xml"] = inXml(record, { name: "error" });
    if (problem)
      errorContent["application/problem+xml"] = inXml(openApiRef("schemas", "ProblemDetails"), {
        name: "problem",
        namespace: "urn:ietf:rfc:7807",
      });
  }
  return { source: "@svc/errors", components: { schemas }, errorContent };
}
