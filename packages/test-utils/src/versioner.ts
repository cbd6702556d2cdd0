import { HttpError, type Versioner } from "@svc/kernel";

/**
 * A pipeline's versioning step for tests that need one without @svc/versioning: a `/v<N>` prefix
 * names the version (none: 1), stripped before routing; versions above 2 are a 404 carrying
 * `API-Supported-Versions: 1, 2`, as every response does.
 */
export const byPathVersioner: Versioner = {
  resolve(_request, target) {
    const match = /^\/v(\d+)(\/.*)?$/.exec(target);
    const version = match === null ? 1 : Number(match[1]);
    return {
      target: match === null ? target : (match[2] ?? "/"),
      version,
      prefix: match === null ? "" : `/v${version}`,
      label: undefined,
      fields: { "api-supported-versions": "1, 2" },
      vary: [],
      error: version > 2 ? HttpError.notFound(`version ${version} does not exist`) : undefined,
    };
  },
};
