/**
 * Sends `count` requests to `url` one after the other: their statuses, and the last response
 * (for its headers).
 *
 * @example const { statuses, last } = await inTurn(url, 3); // [200, 200, 429]
 */
export async function inTurn(
  url: string,
  count: number,
  init?: RequestInit,
): Promise<{ statuses: number[]; last: Response }> {
  const statuses: number[] = [];
  let last: Response | undefined;
  for (let i = 0; i < count; i++) {
    last = await fetch(url, init);
    statuses.push(last.status);
  }
  if (!last) throw new Error("inTurn: count must be at least 1");
  return { statuses, last };
}
