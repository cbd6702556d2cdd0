interface WarningRuntime {
  emitWarning?: (message: string, options: { type?: string; code: string }) => void;
}

/**
 * A warning for the operator: `process.emitWarning` with its code where the runtime has it
 * (Node.js, Bun, Deno; `--no-warnings` and `process.on("warning")` see it), else `console.warn`
 * (workerd without `nodejs_compat`, browsers), where a bare `process` would throw.
 *
 * @see https://nodejs.org/api/process.html#processemitwarningwarning-options
 * @internal
 */
export function emitWarning(message: string, code: string, type?: string): void {
  const runtime = (globalThis as { process?: WarningRuntime }).process;
  if (typeof runtime?.emitWarning === "function") {
    runtime.emitWarning(message, type === undefined ? { code } : { type, code });
    return;
  }
  console.warn(`(${code}) ${type ?? "Warning"}: ${message}`);
}
