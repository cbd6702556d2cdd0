import {
  addOpenApiParameter,
  addOpenApiResponse,
  addOpenApiResponseHeaders,
  type OpenApiFragment,
  type OpenApiObject,
  type OpenApiOperationContext,
  openApiErrorResponse,
  openApiRef,
} from "@svc/kernel";
import { checkOptionNames, isOpenApiObject, openApiOperations } from "@svc/kernel/internal";
import { resolveConfig, type VersioningConfig } from "./config.js";
import { optionError } from "./option-error.js";
import type { ApiVersioningOptions } from "./options.js";

/** The version a `/v<N>` path template is prefixed with, if the URI strategy is on. */
function prefixedVersion(config: VersioningConfig, path: string): string | undefined {
  if (!config.uri) return undefined;
  for (const version of config.versions) {
    const head = `/${config.uri.prefix}${String(version)}`;
    if (path === head || path.startsWith(`${head}/`)) return String(version);
  }
  return undefined;
}

function isNeutral(config: VersioningConfig, path: string): boolean {
  return config.neutral.some((matches) => matches(path, path.toLowerCase()));
}

/** The version-selecting parameters, `values` the versions they may name. */
function parameters(
  config: VersioningConfig,
  values: readonly unknown[],
  required: boolean,
): OpenApiObject[] {
  const list: string[] = values.map(String);
  const schema = {
    type: "string",
    enum: list,
    ...(config.defaultVersion !== undefined && list.length > 1
      ? { default: String(config.defaultVersion) }
      : {}),
  };
  const out: OpenApiObject[] = [];
  const describe = `The API version: ${list.join(", ")}${config.defaultVersion === undefined ? "" : `; without one, ${config.defaultVersion}`}`;
  if (config.header) {
    const [name, ...others] = config.header.names;
    out.push({
      name,
      in: "header",
      ...(required ? { required: true } : {}),
      description: others.length ? `${describe} (${others.map((n) => `\`${n}\``).join(", ")} too)` : describe,
      schema,
    });
  }
  if (config.query)
    out.push({
      name: config.query.name,
      in: "query",
      ...(required ? { required: true } : {}),
      description: describe,
      schema,
    });
  return out;
}

/** What {@link versioningOpenApi} describes beyond the options of `versions()`. */
export interface VersioningOpenApiOptions {
  /**
   * The versioned operations whose version the selecting parameters (header, query) may name: not
   * a write whose body schema is one version's, say, since a schema cannot depend on a header.
   * @default every versioned operation not under a `/v<N>` prefix
   */
  selectable?: (context: OpenApiOperationContext) => boolean;
}

const SUPPORTED = {
  "API-Supported-Versions": { description: "The versions the API serves", schema: { type: "string" } },
};

/**
 * The OpenAPI 3.1 fragment of `@svc/versioning`, from the options `versions()` takes: the
 * parameters that select a version (header, query) on every versioned operation not under a
 * `/v<N>` prefix, `API-Supported-Versions` on every success, `Deprecation` and `Sunset` where a
 * version is deprecated, and the refusal of an unknown version at the strategy's status.
 * {@link versionedOpenApi} makes one document per version of a composed document.
 *
 * @see https://www.rfc-editor.org/rfc/rfc9745#section-2 The `Deprecation` field.
 * @see https://www.rfc-editor.org/rfc/rfc8594#section-3 The `Sunset` field.
 */
export function versioningOpenApi(
  options: ApiVersioningOptions,
  described: VersioningOpenApiOptions = {},
): OpenApiFragment {
  const config = resolveConfig(options);
  checkOptionNames("versioning", described, ["selectable"], "versioningOpenApi", "described");
  if (described.selectable !== undefined && typeof described.selectable !== "function")
    throw optionError(
      "described.selectable",
      described.selectable,
      "a function",
      "versioningOpenApi: described.selectable",
    );
  const selectable = described.selectable ?? (() => true);
  const headers: Record<string, OpenApiObject> = {
    ApiSupportedVersions: SUPPORTED["API-Supported-Versions"],
  };
  const onSuccess: Record<string, OpenApiObject> = {
    "API-Supported-Versions": openApiRef("headers", "ApiSupportedVersions"),
  };
  if (config.deprecated.size > 0) {
    headers.Deprecation = {
      description: "When the version in use is (or becomes) deprecated, as `@` and epoch seconds (RFC 9745)",
      schema: { type: "string" },
    };
    headers.Sunset = {
      description: "When the version in use stops answering, an HTTP-date (RFC 8594)",
      schema: { type: "string" },
    };
    onSuccess.Deprecation = openApiRef("headers", "Deprecation");
    onSuccess.Sunset = openApiRef("headers", "Sunset");
  }
  const statuses = new Set<number>(
    // An unknown `/v<N>` prefix is another path, not a refusal of this operation.
    [config.header, config.query, config.custom, config.mediaType]
      .filter((s) => s !== undefined)
      .map((s) => s.unknownVersionStatus),
  );
  const responses: Record<string, OpenApiObject> = {};
  for (const status of statuses)
    responses[`UnknownVersion${status}`] = openApiErrorResponse(
      `The request names a version the API does not serve (${config.list} are)`,
    );
  const selecting = parameters(config, [...config.versions], false);
  return {
    source: "@svc/versioning",
    components: { headers, responses },
    operation(context) {
      const { path, operation } = context;
      if (isNeutral(config, path)) return;
      if (prefixedVersion(config, path) === undefined && selectable(context))
        for (const p of selecting) addOpenApiParameter(operation, p);
      addOpenApiResponseHeaders(operation, onSuccess);
      for (const status of statuses)
        addOpenApiResponse(operation, String(status), openApiRef("responses", `UnknownVersion${status}`));
    },
  };
}

/**
 * One document per version of `document` (composed with {@link versioningOpenApi} of the same
 * options), keyed by the version as text: each keeps the paths under its own `/v<N>` prefix and
 * drops the others', its selecting parameters name it alone (required unless it is the default),
 * its content keeps only its own vendor media types, and a deprecated version's operations are
 * marked `deprecated`.
 *
 * @see https://spec.openapis.org/oas/v3.1.0#operation-object `deprecated` on an operation.
 */
export function versionedOpenApi(
  document: OpenApiObject,
  options: ApiVersioningOptions,
): Map<string, OpenApiObject> {
  const config = resolveConfig(options);
  const all = parameters(config, [...config.versions], false);
  const vendor = config.mediaType
    ? new RegExp(
        `^application/vnd\\.${config.mediaType.vendor.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}\\.v([^+;]+)\\+`,
        "i",
      )
    : undefined;
  const out = new Map<string, OpenApiObject>();
  for (const value of config.versions) {
    const version = String(value);
    const doc = structuredClone(document) as OpenApiObject;
    const info = isOpenApiObject(doc.info) ? doc.info : {};
    doc.info = { ...info, version };
    const deprecated = config.deprecated.has(value);
    const own = parameters(config, [value], value !== config.defaultVersion);
    const paths: OpenApiObject = {};
    for (const [path, item] of Object.entries(isOpenApiObject(doc.paths) ? doc.paths : {})) {
      const prefixed = prefixedVersion(config, path);
      if (prefixed === undefined || prefixed === version) paths[path] = item;
    }
    doc.paths = paths;
    for (const { path, operation } of openApiOperations(doc)) {
      if (isNeutral(config, path)) continue;
      if (Array.isArray(operation.parameters))
        operation.parameters = operation.parameters.map((p) => {
          const at = all.findIndex((a) => isOpenApiObject(p) && a.name === p.name && a.in === p.in);
          return at === -1 ? p : own.find((o) => o.in === all[at]?.in);
        });
      if (deprecated) operation.deprecated = true;
      const responses = isOpenApiObject(operation.responses) ? operation.responses : {};
      for (const response of Object.values(responses)) {
        if (!vendor || !isOpenApiObject(response) || !isOpenApiObject(response.content)) continue;
        for (const type of Object.keys(response.content)) {
          const named = vendor.exec(type)?.[1];
          if (named !== undefined && named !== version) delete response.content[type];
        }
      }
    }
    out.set(version, doc);
  }
  return out;
}
