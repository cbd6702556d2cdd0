/**
 * What {@link followRedirection} reads of a node-redis cluster (`createCluster`), structurally: its
 * masters by `host:port`, and the connected client of one of them. The node-redis cluster shapes
 * of the Redis stores of `@svc/ratelimit` and `@svc/idempotency` (`NodeRedisClusterLike`) extend it.
 */
export interface RedirectingCluster {
  /** Masters by `host:port`: where an `ASK` or `MOVED` redirection the cluster gave up on is followed. */
  readonly nodeByAddress?: ReadonlyMap<string, unknown> | undefined;
  /** The connected client of one node of `nodeByAddress`. */
  nodeClient?(node: never): RedirectedClient | Promise<RedirectedClient>;
}

/** The client of one cluster node: a command as its words. */
export interface RedirectedClient {
  sendCommand(args: string[]): Promise<unknown>;
}

/**
 * Follows the redirection a node-redis cluster gave up on: the command goes to the node an `ASK`
 * or `MOVED` error names, at most {@link MAX_REDIRECTIONS} times. Redis Cluster spec, "ASK
 * redirection": the client should "send the query to the specified node" after "the ASKING
 * command [which] sets a one-time flag on the client that forces a node to serve a query about an
 * IMPORTING slot"; without the flag the importing node answers MOVED back to the old owner.
 * node-redis 4 sends ASKING and the command as two separate round trips, so under concurrency
 * another command on the same connection can take the one-time flag, and after
 * `maxCommandRedirections` of ASK and MOVED the cluster client rejects with the last of them.
 * Here ASKING and the command are queued in the same tick, so nothing is written between them.
 * An `ASK` or `MOVED` reply means the command did not run, so nothing runs twice. Anything else,
 * or a node the cluster does not know, is rethrown as is.
 * @see https://redis.io/docs/latest/operate/oss_and_stack/reference/cluster-spec/#ask-redirection
 * @see https://redis.io/docs/latest/operate/oss_and_stack/reference/cluster-spec/#moved-redirection
 *
 * @internal For the Redis stores of `@svc/ratelimit` and `@svc/idempotency`.
 */
export async function followRedirection(
  cluster: RedirectingCluster,
  err: unknown,
  args: string[],
): Promise<unknown> {
  let error = err;
  for (let hop = 0; hop < MAX_REDIRECTIONS; hop++) {
    const redirect = error instanceof Error ? /^(ASK|MOVED) \d+ (\S+)$/.exec(error.message) : null;
    const node = redirect ? cluster.nodeByAddress?.get(redirect[2] as string) : undefined;
    if (redirect === null || node === undefined || typeof cluster.nodeClient !== "function") throw error;
    const target = await cluster.nodeClient(node as never);
    try {
      if (redirect[1] === "MOVED") return await target.sendCommand(args);
      const [, reply] = await Promise.all([target.sendCommand(["ASKING"]), target.sendCommand(args)]);
      return reply;
    } catch (next) {
      error = next;
    }
  }
  throw error;
}

/** How many redirections {@link followRedirection} follows after the cluster client's own. */
const MAX_REDIRECTIONS = 5;
