// What the `express` and `node` entries, whose requests are Node.js `IncomingMessage`s, offer
// again of the package's main entry, so that an application imports from its framework's entry.
export {
  commitKey,
  type IdempotencyOptions,
  type IdempotencyPrincipal,
  type IdempotencyRequest,
} from "@svc/idempotency";
