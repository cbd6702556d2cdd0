import { type ResolvedXmlLimits, XmlError } from "./model.js";
import { deadlineQueue, type ReadDeadline } from "./read-deadline.js";

interface EmitterStream {
  on(event: string, listener: (arg: never) => void): unknown;
  off(event: string, listener: (arg: never) => void): unknown;
  resume(): unknown;
}

export function isEmitterStream(value: unknown): value is EmitterStream {
  const v = value as Partial<EmitterStream> | null;
  return typeof v?.on === "function" && typeof v.off === "function" && typeof v.resume === "function";
}

/**
 * Reads a Node stream through 'data' events. On a failure the listeners go and the stream stays
 * flowing, so the rest of the body is discarded rather than left in the socket, where closing
 * it would reset the connection before the client reads the fault. With `timeoutMs`, a stream
 * that has not ended in time fails the same way (RFC 9110 §15.5.9); its deadline is a link in a
 * shared, coarsely swept list (read-deadline.ts), not a timer of its own, so a message that
 * arrives in time pays two pointer updates for it.
 */
export function readEmitter(
  stream: EmitterStream,
  onChunk: (chunk: Uint8Array | string) => void,
  timeoutMs: number | undefined,
): Promise<void> {
  return new Promise((resolve, reject) => {
    const queue = timeoutMs === undefined ? undefined : deadlineQueue(timeoutMs);
    let deadline: ReadDeadline | undefined;
    const cleanup = () => {
      stream.off("data", onData);
      stream.off("end", onEnd);
      stream.off("error", onError);
      if (deadline !== undefined) queue?.remove(deadline);
    };
    const onData = (chunk: Uint8Array | string) => {
      try {
        onChunk(chunk);
      } catch (err) {
        cleanup();
        reject(err);
      }
    };
    // After 'end' the stream emits no more data: its listeners stay until it is collected
    // with the request, which saves removing three listeners per message.
    const onEnd = () => {
      if (deadline !== undefined) queue?.remove(deadline);
      resolve();
    };
    const onError = (err: unknown) => {
      cleanup();
      reject(
        new XmlError("malformed", `The message could not be read: ${(err as Error)?.message ?? "aborted"}`),
      );
    };
    stream.on("data", onData);
    stream.on("end", onEnd);
    stream.on("error", onError);
    if (queue !== undefined) {
      deadline = queue.add(() => {
        cleanup();
        reject(timedOut(queue.timeoutMs));
      });
    }
    stream.resume();
  });
}

/**
 * Reads any other async iterable of chunks, abandoning it (`return()`, which destroys a Node
 * stream) when it has not ended within `timeoutMs` (RFC 9110 §15.5.9). Not the path of
 * `soapEndpoint`, so a timer per read is fine here.
 */
export async function readIterable(
  source: AsyncIterable<Uint8Array | string>,
  onChunk: (chunk: Uint8Array | string) => void,
  timeoutMs: number,
): Promise<void> {
  const iterator = source[Symbol.asyncIterator]();
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(timedOut(timeoutMs)), timeoutMs);
  });
  let done = false;
  try {
    for (;;) {
      const next = await Promise.race([iterator.next(), expired]);
      if (next.done) {
        done = true;
        return;
      }
      onChunk(next.value);
    }
  } finally {
    clearTimeout(timer);
    // Abandoned (timed out, or a chunk refused): the source need not produce the rest.
    if (!done) void Promise.resolve(iterator.return?.()).catch(() => {});
  }
}

function timedOut(timeoutMs: number): XmlError {
  return new XmlError("timeout", `The message did not arrive within ${timeoutMs} ms`);
}

export function tooLarge(limits: ResolvedXmlLimits): XmlError {
  return new XmlError("too-large", `The message is larger than ${limits.maxBytes} bytes`);
}
