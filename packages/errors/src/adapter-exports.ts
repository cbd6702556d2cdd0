// What the `node`, `fastify` and `fetch` entries offer again of the package's main entry, so that
// an application imports its error handling from the entry of its framework alone.
export {
  type DefaultErrorFormat,
  type ErrorLogger,
  type ErrorMapper,
  type ErrorOptions,
  type Logger,
  methodNotAllowedError,
  notFoundError,
} from "@svc/errors";
