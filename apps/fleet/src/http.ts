import { Agent as HttpAgent, request as httpRequest, type IncomingHttpHeaders } from "node:http";
import { Agent as HttpsAgent, request as httpsRequest } from "node:https";

/** A response read to the end. */
export interface Reply {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
  /** The body as JSON (throws when it is not). */
  json<T = Record<string, unknown>>(): T;
  header(name: string): string | undefined;
}

export interface CallOptions {
  method?: string;
  headers?: Record<string, string>;
  /** A string body, or an object sent as JSON. */
  body?: string | object;
  /**
   * The local address the connection comes from: any 127.x.y.z works on Linux's loopback, so a
   * test can be several clients and the server can tell them apart by address.
   */
  localAddress?: string;
  /** A CA to trust for https (the fleet's self-signed certificate). */
  ca?: string;
  agent?: HttpAgent;
  timeoutMs?: number;
}

/**
 * One HTTP(S) request with node's own client: unlike `fetch`, it can choose its local address
 * and the certificate to trust, which the fleet suites need.
 */
export function call(url: string, options: CallOptions = {}): Promise<Reply> {
  const target = new URL(url);
  const headers: Record<string, string> = { ...options.headers };
  let payload: string | undefined;
  if (options.body !== undefined) {
    payload = typeof options.body === "string" ? options.body : JSON.stringify(options.body);
    if (!Object.keys(headers).some((h) => h.toLowerCase() === "content-type"))
      headers["content-type"] = "application/json";
  }
  const https = target.protocol === "https:";
  const send = https ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const req = send(
      target,
      {
        method: options.method ?? "GET",
        headers,
        ...(options.localAddress ? { localAddress: options.localAddress } : {}),
        ...(options.agent ? { agent: options.agent } : { agent: false }),
        ...(https && options.ca ? { ca: options.ca } : {}),
        ...(https ? { servername: target.hostname } : {}),
        timeout: options.timeoutMs ?? 15_000,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("error", reject);
        res.on("end", () => {
          const body = Buffer.concat(chunks).toString("utf8");
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body,
            json: <T>() => JSON.parse(body) as T,
            header: (name) => {
              const v = res.headers[name.toLowerCase()];
              return Array.isArray(v) ? v.join(", ") : v;
            },
          });
        });
      },
    );
    req.on("timeout", () => req.destroy(new Error(`${options.method ?? "GET"} ${url} timed out`)));
    req.on("error", reject);
    req.end(payload);
  });
}

/** A keep-alive agent for load loops (http or https). */
export function keepAliveAgent(https: boolean, maxSockets: number, ca?: string): HttpAgent {
  return https
    ? new HttpsAgent({ keepAlive: true, maxSockets, ...(ca ? { ca } : {}) })
    : new HttpAgent({ keepAlive: true, maxSockets });
}

/** `Authorization: Basic` for a user whose password is its name (the fleet's demo users). */
export function basic(user: string, password = user): string {
  return `Basic ${Buffer.from(`${user}:${password}`).toString("base64")}`;
}
