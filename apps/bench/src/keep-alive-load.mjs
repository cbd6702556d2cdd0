// Requests over keep-alive sockets, a fixed number at a time, for the bench's instruction and
// feedback probes (callgrind.mjs, tick-feedback.mjs).
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
