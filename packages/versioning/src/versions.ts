import type { Fields, PipelineRequest, VersionDecision, Versioner } from "@svc/kernel";
import { isHttpError } from "@svc/kernel";
import { resolveConfig } from "./config.js";
import { decide } from "./core.js";
import type { ApiVersioningOptions } from "./options.js";
import { hasContent } from "./parse.js";

const CONTENT_TYPE = "Content-Type";

/** Field names in lower case, as the pipeline keeps them. */
function lowerCased(fields: Readonly<Record<string, string>>): Fields {
  const out: Fields = {};
  for (const name of Object.keys(fields)) out[name.toLowerCase()] = fields[name] as string;
  return out;
}

/**
 * The pipeline's versioning step (`createPipeline({ versioning: versions({...}) })` of
 * `@svc/kernel`): the decision `apiVersioning` documents (URI `/v<N>` prefix, `API-Version` /
 * `Accept-Version` header, vendor media type; they must agree), made before routing. The decision
 * carries the version, the target without its prefix, the vendor type that labels the response's
 * JSON or XML (RFC 6838 §3.2), the fields every response carries (`API-Supported-Versions`, and for
 * a deprecated version `Deprecation`, RFC 9745 §2, `Sunset`, RFC 8594 §3, and their `Link`s) and
 * the request fields it depended on; a refusal (404, 400, 406, 415) carries the same fields.
 *
 * @example
 * const svc = expressAdapter(createPipeline({ versioning: versions({ versions: [1, 2], defaultVersion: 2 }) }));
 * app.use(svc.prepare); // /v1/employees is routed as /employees, req.apiVersion 1
 * @see https://www.rfc-editor.org/rfc/rfc9745
 */
export function versions(options: ApiVersioningOptions): Versioner {
  const config = resolveConfig(options);
  const supported = lowerCased(config.supported);
  return {
    resolve(request: PipelineRequest, target: string): VersionDecision {
      const caseSensitive =
        config.caseSensitive ??
        (request.native as { app?: { get(s: string): unknown } } | undefined)?.app?.get(
          "case sensitive routing",
        ) === true;
      try {
        const resolution = decide(config, request.method, target, request.headers, caseSensitive);
        const fields: Fields = { ...supported };
        const deprecation = resolution.deprecation;
        if (deprecation !== undefined) {
          fields.deprecation = deprecation.deprecation;
          if (deprecation.sunset !== undefined) fields.sunset = deprecation.sunset;
          if (deprecation.links.length > 0) fields.link = deprecation.links.join(", ");
        }
        return {
          target: resolution.url,
          version: resolution.version,
          prefix: resolution.pathPrefix,
          label: resolution.mediaType,
          fields,
          vary: resolution.vary,
          error: undefined,
        };
      } catch (err) {
        if (!isHttpError(err)) throw err;
        // RFC 9110 §12.5.5: a refusal depended on every field that could have named the version,
        // and on a request's Content-Type when it has content (vnd.svc.v9+json is a 415).
        const vary =
          config.mediaType && hasContent(request.headers)
            ? [...config.varyAll, CONTENT_TYPE]
            : config.varyAll;
        return {
          target,
          version: undefined,
          prefix: "",
          label: undefined,
          fields: { ...supported },
          vary: [...vary],
          error: err,
        };
      }
    },
  };
}
