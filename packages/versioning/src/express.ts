/**
 * `@svc/versioning` on Express 4 and 5. The version is decided by `expressAdapter(pipeline).prepare`
 * of `@svc/kernel/express` (with `versions()` as the pipeline's `versioning` step), which sets
 * `req.apiVersion` and `req.apiVersionPrefix`; these read them.
 */
export { versioned, versionedPath } from "@svc/versioning";
