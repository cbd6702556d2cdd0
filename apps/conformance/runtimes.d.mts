/** A runtime of `runtimes.json`. */
export interface Runtime {
  /** `name@version` on the npm registry. */
  package: string;
  /** The runtime's binary, run with `args` and a script. */
  bin?: string;
  args?: string[];
  /** Or the Node.js module that runs it: miniflare, which runs workerd. */
  module?: "miniflare";
  compatibilityDate?: string;
  compatibilityFlags?: string[];
  /** `src/runtimes/<entry>.ts`: how the runtime serves the Hono composition. */
  entry: string;
}

/** The pinned runtimes of `runtimes.json`, by name. */
export const RUNTIMES: Record<string, Runtime>;

/** The folder `name`'s package is installed in, and the file that shows it is there. */
export function placeOf(name: string): { folder: string; installed: string };
