import type { Host } from "./host-types.js";

/**
 * The host of the build for workerd, workers and browsers (package.json `exports` conditions
 * `workerd`, `worker`, `browser`), in place of `host.ts`: no file system, so a contract comes
 * from `contract.documents`; no X.509 signature verification (it needs `node:crypto`'s
 * `X509Certificate` and xml-crypto), so `wsSecurity.signature` is refused at construction.
 */
export const host: Host = { files: undefined, signatures: undefined };
