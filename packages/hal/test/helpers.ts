import { request } from "node:http";
import { connect } from "node:net";

/** GET `path` with a `Host` of the test's choosing (fetch refuses to set it). */
export function getWithHost(
  base: string,
  path: string,
  host: string,
): Promise<{ status: number; body: string }> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    request({ host: hostname, port, path, headers: { host } }, (res) => {
      let body = "";
      res.on("data", (c: Buffer) => {
        body += c.toString();
      });
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
    })
      .on("error", reject)
      .end();
  });
}

/** Sends `request` as written (fetch refuses to set Host or speak HTTP/1.0) and returns the reply. */
export function raw(base: string, request: string): Promise<string> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    const socket = connect({ host: hostname, port: Number(port) }, () => socket.end(request));
    let reply = "";
    socket.on("data", (chunk: Buffer) => {
      reply += chunk.toString();
    });
    socket.on("end", () => resolve(reply));
    socket.on("error", reject);
  });
}
