import type * as NodeCrypto from "node:crypto";
import { codedError } from "./options.js";

type BuiltinLoader = { getBuiltinModule?: (id: string) => unknown };

/**
 * `node:crypto` where the runtime has it (Node.js, Bun, Deno), found through
 * `process.getBuiltinModule` (Node.js 20.16, 22.3) rather than imported, so the same module loads
 * where there is no Node.js (workerd without `nodejs_compat`, browsers), which then use Web
 * Crypto and the portable code beside each use. Node's is kept where it has it because its scrypt
 * runs on the libuv threadpool (a portable scrypt holds the event loop for the whole derivation)
 * and its `KeyObject` reads a PEM or JWK key synchronously, so a bad key is refused at
 * construction.
 *
 * @see https://nodejs.org/api/process.html#processgetbuiltinmoduleid
 */
export const nodeCrypto: typeof NodeCrypto | undefined = (
  globalThis as { process?: BuiltinLoader }
).process?.getBuiltinModule?.("node:crypto") as typeof NodeCrypto | undefined;

/**
 * `node:crypto`, for what has no Web Crypto path that keeps its synchronous checks (a token
 * issuer's key pair): a coded `TypeError` naming `option` where the runtime has none.
 */
export function requireNodeCrypto(option: string): typeof NodeCrypto {
  if (nodeCrypto !== undefined) return nodeCrypto;
  throw codedError(option, `${option} needs node:crypto, which this runtime does not have`);
}
