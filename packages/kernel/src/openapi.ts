/**
 * OpenAPI 3.1 fragments: what each @svc package adds to an API (its headers, parameters, responses,
 * schemas and security schemes), and the composition of those fragments into one document, so
 * that a document says what the composed middleware does.
 *
 * @see https://spec.openapis.org/oas/v3.1.0#components-object Reusable objects are named in
 * `components`; fragments add theirs there and refer to them with `$ref`.
 */

/** A JSON object of an OpenAPI document (a schema, a response, a parameter, an operation…). */
export type OpenApiObject = { [key: string]: unknown };

/** The kinds of `components` a fragment may add. */
export interface OpenApiComponents {
  schemas?: Record<string, OpenApiObject>;
  responses?: Record<string, OpenApiObject>;
  headers?: Record<string, OpenApiObject>;
  parameters?: Record<string, OpenApiObject>;
  securitySchemes?: Record<string, OpenApiObject>;
}

/** One operation of a document as a fragment sees it. */
export interface OpenApiOperationContext {
  /** Lower case, as the Path Item names it: `get`, `post`… */
  readonly method: string;
  /** The path template: `/employees/{id}`. */
  readonly path: string;
  /** The Operation Object; a fragment changes it in place through the helpers below. */
  readonly operation: OpenApiObject;
  /** Whether the operation needs credentials: its own `security`, else the document's, is non-empty. */
  readonly secured: boolean;
}

/**
 * What one package adds to a document. `components` are merged by name (the same name with a
 * different value is refused); `operation` is called once for every operation of the document.
 */
export interface OpenApiFragment {
  /** The package, named in a conflict. */
  readonly source: string;
  readonly components?: OpenApiComponents;
  /**
   * The content of every error response (by media type): each {@link openApiErrorResponse} gets
   * it. `@svc/errors` gives the error record's; fragments that give it must agree.
   */
  readonly errorContent?: OpenApiObject;
  readonly operation?: (context: OpenApiOperationContext) => void;
}

/** Marks a response whose content is the error record, filled in by {@link composeOpenApi}. */
const ERROR_MARK = "x-svc-error-record";

/**
 * An error response: its content is the error content of the composed document (`@svc/errors`'s
 * fragment gives it), so that a package that refuses a request describes the refusal without
 * knowing how errors are written.
 */
export function openApiErrorResponse(
  description: string,
  headers?: Record<string, OpenApiObject>,
): OpenApiObject {
  return { description, ...(headers ? { headers } : {}), [ERROR_MARK]: true };
}

const METHODS = ["get", "put", "post", "delete", "options", "head", "patch", "trace"] as const;
const KINDS = ["schemas", "responses", "headers", "parameters", "securitySchemes"] as const;

/** `{ $ref: "#/components/<kind>/<name>" }` */
export function openApiRef(kind: (typeof KINDS)[number], name: string): OpenApiObject {
  return { $ref: `#/components/${kind}/${name}` };
}

/**
 * Whether `value` is a JSON object (not an array, not null).
 *
 * @internal
 */
export function isOpenApiObject(value: unknown): value is OpenApiObject {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

function same(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/**
 * Adds a parameter unless the operation already has one of the same name and location, or the
 * same `$ref`.
 *
 * @see https://spec.openapis.org/oas/v3.1.0#operation-object A parameter is unique by `name` and
 * `in`; a list with two of them is invalid.
 */
export function addOpenApiParameter(
  operation: OpenApiObject,
  parameter: OpenApiObject,
  resolved?: { name: string; in: string },
): void {
  const list = Array.isArray(operation.parameters) ? (operation.parameters as unknown[]) : [];
  const key =
    resolved ??
    (typeof parameter.name === "string" ? { name: parameter.name, in: String(parameter.in) } : undefined);
  for (const p of list) {
    if (!isOpenApiObject(p)) continue;
    if (parameter.$ref !== undefined && p.$ref === parameter.$ref) return;
    if (
      key &&
      typeof p.name === "string" &&
      p.name.toLowerCase() === key.name.toLowerCase() &&
      p.in === key.in
    )
      return;
  }
  operation.parameters = [...list, parameter];
}

/** Adds a response for `status` unless the operation already describes that status. */
export function addOpenApiResponse(operation: OpenApiObject, status: string, response: OpenApiObject): void {
  const responses = isOpenApiObject(operation.responses) ? operation.responses : {};
  if (responses[status] === undefined) responses[status] = response;
  operation.responses = responses;
}

/**
 * Adds response headers to every response of the operation whose status starts with one of
 * `classes` (`"2"`, `"4"`…), unless it names them already. A `$ref`'d response is left alone: its
 * component says what it carries.
 */
export function addOpenApiResponseHeaders(
  operation: OpenApiObject,
  headers: Record<string, OpenApiObject>,
  classes: readonly string[] = ["2"],
): void {
  const responses = isOpenApiObject(operation.responses) ? operation.responses : {};
  for (const [status, response] of Object.entries(responses)) {
    if (
      !classes.some((c) => status.startsWith(c)) ||
      !isOpenApiObject(response) ||
      response.$ref !== undefined
    )
      continue;
    const present = isOpenApiObject(response.headers) ? response.headers : {};
    const lower = new Set(Object.keys(present).map((n) => n.toLowerCase()));
    for (const [name, header] of Object.entries(headers))
      if (!lower.has(name.toLowerCase())) present[name] = header;
    response.headers = present;
  }
}

/**
 * Every operation of `document`'s `paths`, with its path template and its (lower-case) method.
 *
 * @internal
 */
export function openApiOperations(
  document: OpenApiObject,
): Array<{ path: string; method: string; operation: OpenApiObject }> {
  const found: Array<{ path: string; method: string; operation: OpenApiObject }> = [];
  const paths = isOpenApiObject(document.paths) ? document.paths : {};
  for (const [path, item] of Object.entries(paths)) {
    if (!isOpenApiObject(item)) continue;
    for (const method of METHODS) {
      const operation = item[method];
      if (isOpenApiObject(operation)) found.push({ path, method, operation });
    }
  }
  return found;
}

function secured(document: OpenApiObject, operation: OpenApiObject): boolean {
  const security = operation.security ?? document.security;
  return (
    Array.isArray(security) &&
    security.length > 0 &&
    !security.some((r) => isOpenApiObject(r) && Object.keys(r).length === 0)
  );
}

/**
 * The document with every fragment's components merged and its operations described. The input is
 * not changed. A component name that two fragments (or the document and a fragment) define
 * differently is refused with an error naming both: a `$ref` would silently mean one of them.
 */
export function composeOpenApi(
  document: OpenApiObject,
  fragments: readonly OpenApiFragment[],
): OpenApiObject {
  const out = structuredClone(document) as OpenApiObject;
  const components = (isOpenApiObject(out.components) ? out.components : {}) as Record<
    string,
    Record<string, unknown>
  >;
  out.components = components;
  const owner = new Map<string, string>();
  let errorContent: OpenApiObject | undefined;
  let errorSource = "";
  for (const fragment of fragments) {
    if (fragment.errorContent) {
      if (errorContent && !same(errorContent, fragment.errorContent))
        throw new Error(`composeOpenApi: ${fragment.source} and ${errorSource} both give the error content`);
      errorContent = fragment.errorContent;
      errorSource = fragment.source;
    }
    for (const kind of KINDS) {
      const add = fragment.components?.[kind];
      if (!add) continue;
      const into = components[kind] ?? {};
      components[kind] = into;
      for (const [name, value] of Object.entries(add)) {
        const key = `${kind}/${name}`;
        if (into[name] !== undefined && !same(into[name], value))
          throw new Error(
            `composeOpenApi: ${fragment.source} defines #/components/${key}, which ${owner.get(key) ?? "the document"} defines otherwise`,
          );
        into[name] = structuredClone(value);
        if (!owner.has(key)) owner.set(key, fragment.source);
      }
    }
  }
  const fill = (response: unknown) => {
    if (!isOpenApiObject(response) || response[ERROR_MARK] === undefined) return;
    delete response[ERROR_MARK];
    if (errorContent && response.content === undefined) response.content = structuredClone(errorContent);
  };
  for (const response of Object.values(components.responses ?? {})) fill(response);
  for (const { path, method, operation } of openApiOperations(out)) {
    const context = { method, path, operation, secured: secured(out, operation) };
    for (const fragment of fragments) fragment.operation?.(context);
    if (isOpenApiObject(operation.responses))
      for (const response of Object.values(operation.responses)) fill(response);
  }
  return out;
}
