import {
  addOpenApiResponse,
  type OpenApiFragment,
  type OpenApiObject,
  type OpenApiOperationContext,
  openApiErrorResponse,
  openApiRef,
} from "@svc/kernel";
import { checkOptionNames, checkOptionType, refusedOption } from "@svc/kernel/internal";

/** One scheme of {@link authOpenApi}: `true`, or what the document says of it. */
export interface AuthOpenApiScheme {
  /** Shown to the document's readers: where the credentials come from. */
  description?: string;
}

/** Options of {@link authOpenApi}: the schemes the authenticator takes. */
export interface AuthOpenApiOptions {
  /** HTTP Basic (RFC 7617), as `basic` in `securitySchemes`. @default false */
  basic?: boolean | AuthOpenApiScheme;
  /** Bearer tokens (RFC 6750), JWTs, as `bearer`. @default false */
  bearer?: boolean | AuthOpenApiScheme;
  /** DPoP-bound tokens (RFC 9449), as `dpop`. @default false */
  dpop?: boolean | AuthOpenApiScheme;
  /**
   * The operations whose authorization guard can refuse an authenticated caller (403).
   * @default those whose security requirement names scopes
   */
  forbidden?: (context: OpenApiOperationContext) => boolean;
}

const OPTIONS = ["basic", "bearer", "dpop", "forbidden"];

function scheme(name: string, value: unknown): AuthOpenApiScheme | undefined {
  if (value === undefined || value === false) return undefined;
  if (value === true) return {};
  checkOptionNames("auth", value, ["description"], "authOpenApi", name);
  const description = (value as AuthOpenApiScheme).description;
  if (description !== undefined && typeof description !== "string")
    throw refusedOption(
      "auth",
      `${name}.description`,
      description,
      "a string",
      `authOpenApi: ${name}.description`,
    );
  return value as AuthOpenApiScheme;
}

/** Whether a requirement of the operation names a scope. */
function scoped({ operation }: OpenApiOperationContext): boolean {
  const security = operation.security;
  return (
    Array.isArray(security) &&
    security.some(
      (requirement) =>
        requirement !== null &&
        typeof requirement === "object" &&
        Object.values(requirement).some((scopes) => Array.isArray(scopes) && scopes.length > 0),
    )
  );
}

/**
 * The OpenAPI 3.1 fragment of `@svc/auth`: the security schemes it verifies, the 401 of every
 * operation that needs credentials with its `WWW-Authenticate` challenge, and the 403 of those an
 * authorization guard can refuse.
 *
 * @see https://spec.openapis.org/oas/v3.1.0#security-scheme-object An `http` scheme names an
 * authentication scheme of the IANA registry: `basic`, `bearer`, `dpop`.
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-11.6.1 A 401 carries `WWW-Authenticate`.
 */
export function authOpenApi(options: AuthOpenApiOptions): OpenApiFragment {
  checkOptionNames("auth", options, OPTIONS, "authOpenApi");
  const basic = scheme("basic", options?.basic);
  const bearer = scheme("bearer", options?.bearer);
  const dpop = scheme("dpop", options?.dpop);
  if (!basic && !bearer && !dpop)
    throw refusedOption("auth", "basic", undefined, "at least one of basic, bearer and dpop", "authOpenApi");
  checkOptionType("auth", "forbidden", options.forbidden, "function", "a function", "authOpenApi: forbidden");
  const forbidden = options.forbidden ?? scoped;
  const described = (s: AuthOpenApiScheme, rest: OpenApiObject) =>
    s.description === undefined ? rest : { ...rest, description: s.description };
  const securitySchemes: Record<string, OpenApiObject> = {};
  const names: string[] = [];
  if (basic) {
    securitySchemes.basic = described(basic, { type: "http", scheme: "basic" });
    names.push("`Basic`");
  }
  if (bearer) {
    securitySchemes.bearer = described(bearer, { type: "http", scheme: "bearer", bearerFormat: "JWT" });
    names.push("`Bearer`");
  }
  if (dpop) {
    securitySchemes.dpop = described(dpop, { type: "http", scheme: "dpop", bearerFormat: "JWT" });
    names.push("`DPoP`");
  }
  return {
    source: "@svc/auth",
    components: {
      securitySchemes,
      headers: {
        WWWAuthenticate: {
          description: `A challenge per accepted scheme: ${names.join(", ")}`,
          schema: { type: "string" },
        },
      },
      responses: {
        Unauthorized: openApiErrorResponse("No or bad credentials", {
          "WWW-Authenticate": openApiRef("headers", "WWWAuthenticate"),
        }),
        Forbidden: openApiErrorResponse("Authenticated, but not allowed to do this"),
      },
    },
    operation(context) {
      if (!context.secured) return;
      addOpenApiResponse(context.operation, "401", openApiRef("responses", "Unauthorized"));
      if (forbidden(context))
        addOpenApiResponse(context.operation, "403", openApiRef("responses", "Forbidden"));
    },
  };
}
