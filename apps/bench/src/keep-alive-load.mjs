// Requests over keep-alive sockets, a fixed number at a time, and the wait for a server to
// answer, for the bench's instruction and feedback probes (callgrind.mjs, probed-reference.mjs).
import { request } from "node:http";

/** `count` requests of `plan` over `agent`'s keep-alive sockets, `connections` at a time. */
export function send(url, agent, plan, count, connections) {
  const { method = "GET", path, headers = {}, body, expectStatus = 200 } = plan;
  let started = 0;
  let finished = 0;
  return new Promise((done, fail) => {
    const next = () => {
      if (started >= count) return;
      started++;
      const req = request(`${url}${path}`, { agent, method, headers }, (res) => {
        res.resume();
        res.on("end", () => {
          if (res.statusCode !== expectStatus)
            return fail(new Error(`${method} ${path} → ${res.statusCode}`));
          if (++finished === count) done();
          else next();
        });
      });
      // A keep-alive socket the server closed while idle (its keep-alive timeout passes while
      // callgrind switches instrumentation on): send the request again on a fresh one.
      req.on("error", (err) => {
        if (err.code !== "ECONNRESET") return fail(err);
        started--;
        next();
      });
      req.end(body);
    };
    for (let i = 0; i < connections; i++) next();
  });
}

/**
 * Resolves once `url` answers (with `status`, when given); rejects when `child` ends first, or
 * after `timeoutMs`, with `detail()` (what the server last printed) in the error.
 */
export async function waitReady(child, url, { status, timeoutMs = 60_000, detail = () => "" } = {}) {
  for (const deadline = Date.now() + timeoutMs; Date.now() < deadline; ) {
    if (child.exitCode !== null)
      throw new Error(`the server ended (${child.exitCode}) before ${url} answered: ${detail()}`);
    try {
      const response = await fetch(url);
      if (status === undefined || response.status === status) return;
    } catch {}
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`${url} did not answer in ${timeoutMs / 1000} s: ${detail()}`);
}
