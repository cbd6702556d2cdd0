/**
 * `@svc/conditional` on Express 4 and 5: the `preconditions()` middleware and `setLastModified`,
 * for routes outside the response pipeline. Under the pipeline, `validators()` is a step of
 * `createPipeline` and `expressAdapter(pipeline)` of `@svc/kernel/express` carries it.
 */
export { type PreconditionsOptions, preconditions, setLastModified } from "@svc/conditional";
