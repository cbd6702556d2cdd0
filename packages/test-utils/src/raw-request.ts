import { request } from "node:http";

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
