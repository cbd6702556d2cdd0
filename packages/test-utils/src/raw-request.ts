import { request } from "node:http";
import { connect } from "node:net";

/** What {@link rawRequest} received: the status, the header fields as Node parsed them, the bytes. */
export interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

/**
 * One request through `node:http`, answered with the bytes as sent: unlike `fetch`, nothing is
 * decoded (`Content-Encoding` stays visible) and an array header value goes out as one field line
 * per member.
 */
export function rawRequest(
  url: string,
  method: string,
  headers: Record<string, string | string[]> = {},
): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () =>
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }),
      );
    });
    req.on("error", reject);
    req.end();
  });
}

/** What {@link rawExchange} received: the status, the head as sent (latin1), the rest of the bytes. */
export interface RawExchange {
  status: number;
  head: string;
  body: string;
}

/**
 * One request written on its own connection byte for byte, for what `fetch` and `node:http` will
 * not send (a Host of the test's choosing, an absolute-form target, TRACE, broken framing): `head`
 * (request line and fields, without the blank line), `Connection: close` and `body`; read until the
 * server closes. Head and body are decoded as latin1, one character per byte.
 */
export function rawExchange(url: string, head: string, body: string | Uint8Array = ""): Promise<RawExchange> {
  return rawSend(
    url,
    Buffer.concat([
      Buffer.from(`${head}\r\nConnection: close\r\n\r\n`, "latin1"),
      typeof body === "string" ? Buffer.from(body, "latin1") : body,
    ]),
  );
}

/**
 * `bytes` written on a connection of their own, exactly and nothing after them (a request left
 * unfinished, to see how the server times it out); what came back by the time the server closed.
 */
export function rawSend(url: string, bytes: Uint8Array): Promise<RawExchange> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    const chunks: Buffer[] = [];
    socket.on("data", (c: Buffer) => chunks.push(c));
    socket.on("error", reject);
    socket.on("close", () => {
      const text = Buffer.concat(chunks).toString("latin1");
      const split = text.indexOf("\r\n\r\n");
      const sent = split === -1 ? text : text.slice(0, split);
      resolve({
        status: Number(/^HTTP\/1\.1 (\d{3})/.exec(sent)?.[1] ?? 0),
        head: sent,
        body: split === -1 ? "" : text.slice(split + 4),
      });
    });
    socket.write(bytes);
  });
}
