/** A load that runs until stopped: `workers` loops, each calling `step` again as soon as it settles. */
export interface Load {
  /** Stops the loops and resolves when every in-flight step has settled. */
  stop(): Promise<void>;
}

/**
 * Starts `workers` concurrent loops of `step`. A step that throws ends nothing: the error is the
 * step's to record (the fault suites count refused connections as data, not as failures).
 */
export function startLoad(workers: number, step: (worker: number, iteration: number) => Promise<void>): Load {
  let running = true;
  const loops = Array.from({ length: workers }, async (_, worker) => {
    for (let i = 0; running; i++) {
      try {
        await step(worker, i);
      } catch {
        // recorded by the step
      }
    }
  });
  return {
    async stop() {
      running = false;
      await Promise.all(loops);
    },
  };
}

/** Polls `check` every 100 ms until it returns true; throws after `timeoutMs`. */
export async function waitFor(
  what: string,
  check: () => Promise<boolean>,
  timeoutMs = 15_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      if (await check()) return;
    } catch {
      // not yet
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
