/**
 * A TCP port on 127.0.0.1 that is free now, for a process started later, drawn below the
 * kernel's ephemeral range (see free-port.mjs).
 */
export function freePort(): Promise<number>;
