import { createHook } from "node:async_hooks";

/** The tick object kept alive, once one is. */
let held: object | undefined;

function noop(): void {}

/**
 * Keeps one of Node.js's `process.nextTick` tick objects alive for the life of the process, so
 * that the shapes V8 gave tick objects stay the shapes it knows them by. Call it once, first thing
 * at start-up (before the application is built); later calls do nothing. Returns whether a tick
 * object is held: `false` where `node:async_hooks` reports no tick object.
 *
 * Why: `nextTick` builds each tick object with an object literal whose first two keys are
 * computed (symbols). V8 caches where each such key goes by the object's shape at that place in
 * the code, and once that cache has seen a second shape it stops caching for good: every later
 * tick object is then built through V8's runtime. Shapes that no live object uses are freed by
 * a full garbage collection, and a busy server often has no tick object alive at that moment;
 * the next tick object gets a new shape, and every request pays for it from then on (the
 * package's README has the figures). Holding one tick object keeps its shape, and the shapes it
 * was built through, alive.
 *
 * It enables an `async_hooks` hook for the one `nextTick` call it makes, and disables it before
 * it returns: no hook runs afterwards.
 *
 * @example
 * import { holdTickShape } from "@svc/kernel/node";
 * holdTickShape(); // first, before the app and its server are made
 */
export function holdTickShape(): boolean {
  if (held !== undefined) return true;
  let captured: object | undefined;
  const hook = createHook({
    init(_asyncId, type, _triggerAsyncId, resource) {
      if (type === "TickObject" && captured === undefined) captured = resource;
    },
  });
  hook.enable();
  try {
    process.nextTick(noop);
  } finally {
    hook.disable();
  }
  held = captured;
  return held !== undefined;
}
