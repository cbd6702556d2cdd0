/**
 * `@svc/versioning` on Express 4 and 5. The version is decided by `expressAdapter(pipeline).prepare`
 * of `@svc/kernel/express` (with `versions()` as the pipeline's `versioning` step), which records
 * the decision in the request's exchange (`requestState(req).version` of `@svc/kernel`); these
 * read it there.
 *
 * @packageDocumentation
 */
import { HttpError, type NextFunction } from "@svc/errors";
import { exchangeOf } from "@svc/kernel";
import { type VersionedOptions, type VersionHandlers, versionDispatch } from "@svc/versioning";

export type { NextFunction } from "@svc/errors";
export { type VersionedOptions, versionedPath } from "@svc/versioning";

type Handler<Req, Res> = (req: Req, res: Res, next: NextFunction) => unknown;

/**
 * A per-route dispatcher on the request's version, as the pipeline's `prepare` decided it from
 * `versions()` (the request's exchange, `exchangeOf(req).version` of `@svc/kernel`): `{ 1: h1, 2: h2 }` calls
 * the handler of the request's version. A version without a handler is a 404 `HttpError` (or, with
 * `inherit`, the nearest lower version's handler). A request without a version (a version-neutral
 * path without a default) uses the `default` handler when given, else 404. Promises returned by
 * handlers are passed through, so Express 5 sees their rejections.
 *
 * @example app.get("/employees/:id", versioned({ 1: getV1, 2: getV2 }));
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-15.5.5
 */
export function versioned<Req extends object, Res>(
  handlers: VersionHandlers<Handler<Req, Res>>,
  options: VersionedOptions = {},
): Handler<Req, Res> {
  const choose = versionDispatch(handlers, options);
  return function svcVersioned(req: Req, res: Res, next: NextFunction): unknown {
    const version = exchangeOf(req).version?.version;
    const handler = choose(version);
    if (handler === undefined) {
      next(
        HttpError.notFound(
          version === undefined
            ? "This resource needs an API version"
            : `This resource is not available in API version ${version}`,
        ),
      );
      return undefined;
    }
    return handler(req, res, next);
  };
}
