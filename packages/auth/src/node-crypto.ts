import type * as NodeCrypto from "node:crypto";

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
