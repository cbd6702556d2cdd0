/**
 * `chunks` one after another in a new array of `total` bytes (their sum, counted when not given),
 * whichever runtime reads them: a `Uint8Array` of its own, whatever the chunks are views of.
 *
 * @example concatBytes([utf8Bytes("ab"), utf8Bytes("c")]) // the bytes of "abc"
 *
 * @internal For the @svc packages that read a body or a stream in chunks.
 */
export function concatBytes(chunks: readonly Uint8Array[], total?: number): Uint8Array {
  let size = total ?? 0;
  if (total === undefined) for (const chunk of chunks) size += chunk.byteLength;
  const whole = new Uint8Array(size);
  let at = 0;
  for (const chunk of chunks) {
    whole.set(chunk, at);
    at += chunk.byteLength;
  }
  return whole;
}
