// Loaded by tick-feedback.mjs into the reference server (`node --allow-natives-syntax --import`):
// on SIGUSR2 it prints V8's feedback vector of `process.nextTick` (the states of its tick-object
// literal's property sites) after a marker line, then asks the server to stop as its operator
// would (SIGTERM). The V8 intrinsic is compiled from a string, so this file stays plain
// JavaScript for the tools that parse it.
const debugPrint = new Function("value", "%DebugPrint(value);");
// SIGUSR1 (tick-feedback.mjs --gc, which starts the server with --expose-gc): two full garbage
// collections now, between two batches of requests.
process.on("SIGUSR1", () => {
  globalThis.gc?.();
  globalThis.gc?.();
});
process.on("SIGUSR2", () => {
  process.stdout.write("\n--- probe ---\n", () => {
    debugPrint(process.nextTick);
    process.kill(process.pid, "SIGTERM");
  });
});
