/**
 * Lets go of a streamed body no one will read (the GET's body of a HEAD, a file a 304 stands in
 * for): destroyed, so that its file or cursor is closed now, not when it is collected. An error it
 * raises after that (a file removed before its open completed: a read stream opens after it is
 * made, and a destroyed one still does) concerns no response, and with no listener it would end the
 * process: it is heard and dropped.
 */
export function releaseBody(body: unknown): void {
  const stream = body as { destroy?: unknown; on?: unknown } | null | undefined;
  if (typeof stream?.destroy !== "function") return;
  if (typeof stream.on === "function") (stream as NodeJS.EventEmitter).on("error", ignore);
  (stream as { destroy(): void }).destroy();
}

function ignore(): void {}
