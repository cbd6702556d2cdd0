/** Whether an option function answered a promise (or any thenable) rather than a plain value. */
export function isThenable<T>(value: T | Promise<T>): value is Promise<T> {
  return typeof (value as Promise<T> | undefined)?.then === "function";
}
