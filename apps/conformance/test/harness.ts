import { request as httpRequest } from "node:http";

/** A request of the table: sent as written, the request-target on the request line as given. */
export interface Request {
  method?: string;
  /** The request-target: origin-form, absolute-form (`http://host/x`, `ftp://...`), `*`. */
  target: string;
  /** Field lines in order; a name may repeat. `Host` is `api.example` unless given. */
  headers?: readonly (readonly [string, string])[];
  body?: string | Uint8Array;
}

/** A response as read off the socket: nothing decoded. */
export interface Response {
  status: number;
  /** The reason phrase of the status line, as sent (not compared: servers word it their own way). */
  reason: string;
  /** Fields by lower-case name, repeated lines joined with ", ", without `Date`. */
  headers: Record<string, string>;
  body: Buffer;
}

/**
 * One row: requests sent first (`before`), then the request, which may be built from what the
 * `before` requests received (an `ETag` to send back). `status` is what every framework answers;
 * `expect` checks the first framework's response further (a field, the body); `every` checks each
 * framework's, but on the frameworks EXCEPTIONS.md lists for the row (what the comparison leaves
 * out: the reason phrase, a `Connection: close`). `answers` is a listed framework's own answer,
 * checked there: its status (EXCEPTIONS.md lists it as differing in `status`) and what else it
 * must hold. Each row gets a client address of its own (`X-Forwarded-For` from a trusted
 * loopback proxy) unless it sends the field itself, so the per-client rate limit of the
 * composition counts the row's own requests only.
 */
export interface Row {
  name: string;
  before?: readonly Request[];
  request: Request | ((before: readonly Response[]) => Request);
  status: number;
  expect?: (response: Response) => void;
  every?: (response: Response) => void;
  answers?: Readonly<Record<string, { status: number; expect?: (response: Response) => void }>>;
}

/** Sends `request` to `url` (`http://127.0.0.1:<port>`) with `client` as its forwarded address. */
export function send(url: string, request: Request, client: string): Promise<Response> {
  const lines = request.headers ?? [];
  const has = (name: string) => lines.some(([n]) => n.toLowerCase() === name);
  const flat: string[] = [];
  if (!has("host")) flat.push("Host", "api.example");
  if (!has("x-forwarded-for") && !has("forwarded")) flat.push("X-Forwarded-For", client);
  for (const [name, value] of lines) flat.push(name, value);
  const body =
    request.body === undefined
      ? undefined
      : typeof request.body === "string"
        ? Buffer.from(request.body)
        : request.body;
  if (body !== undefined && !has("content-length") && !has("transfer-encoding")) {
    flat.push("Content-Length", String(body.byteLength));
  }
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: hostname,
        port,
        method: request.method ?? "GET",
        path: request.target,
        headers: flat,
        agent: false,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => {
          const headers: Record<string, string> = {};
          for (let i = 0; i < res.rawHeaders.length; i += 2) {
            const name = (res.rawHeaders[i] as string).toLowerCase();
            if (name === "date") continue;
            const value = res.rawHeaders[i + 1] as string;
            headers[name] = headers[name] === undefined ? value : `${headers[name]}, ${value}`;
          }
          resolve({
            status: res.statusCode ?? 0,
            reason: res.statusMessage ?? "",
            headers,
            body: Buffer.concat(chunks),
          });
        });
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

const TIMESTAMP = /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z/g;

/** The fields that count seconds to a rate limit's reset, and where their number is. */
const RESETS: Record<string, RegExp> = {
  ratelimit: /(?<=;t=)\d+/g,
  "x-ratelimit-reset": /^\d+$/g,
  "retry-after": /^\d+$/g,
};

/**
 * What is compared between frameworks: the status, the fields but `Date` (and the `Connection:
 * close` answering the request's own), the body. What varies
 * with the moment a request is answered is left out: the error record's `timestamp`, and the
 * seconds to a rate limit's reset (each framework's request comes some milliseconds after the
 * previous one's, so a second may have turned), which {@link resets} gives for a check of their own.
 */
export function comparable(response: Response): {
  status: number;
  headers: Record<string, string>;
  body: string;
} {
  const text = response.body.toString("latin1");
  const headers = Object.entries(response.headers)
    // Every request of the table says `Connection: close` (RFC 9112 §9.6: no agent keeps it), so
    // every server closes the connection: Node's say so once, Bun's not at all, and Deno's adds its
    // own `close` to one the application set (`close, close`).
    .filter(([name, value]) => name !== "connection" || !/^close(\s*,\s*close)*$/i.test(value))
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([name, value]) => [name, RESETS[name] === undefined ? value : value.replace(RESETS[name], "<s>")]);
  return {
    status: response.status,
    headers: Object.fromEntries(headers),
    body: text.replace(TIMESTAMP, "<timestamp>"),
  };
}

/** The seconds to a rate limit's reset in `response`'s fields, in the order they appear. */
export function resets(response: Response): number[] {
  return Object.keys(RESETS).flatMap((name) =>
    [...(response.headers[name] ?? "").matchAll(RESETS[name] as RegExp)].map((m) => Number(m[0])),
  );
}

/**
 * How `answer` differs from `reference`, as EXCEPTIONS.md names it: `status` (and nothing more: a
 * different status differs in everything), else the names of the fields that differ, `vary order`
 * for a `Vary` of the same members in another order, and `body`.
 */
export function differences(reference: Response, answer: Response): string[] {
  const a = comparable(reference);
  const b = comparable(answer);
  if (a.status !== b.status) return ["status"];
  const parts: string[] = [];
  for (const name of [...new Set([...Object.keys(a.headers), ...Object.keys(b.headers)])].sort()) {
    const x = a.headers[name];
    const y = b.headers[name];
    if (x === y) continue;
    const members = (v: string | undefined) => JSON.stringify((v ?? "").split(/\s*,\s*/).sort());
    parts.push(
      name === "vary" && x !== undefined && y !== undefined && members(x) === members(y)
        ? "vary order"
        : name,
    );
  }
  if (a.body !== b.body) parts.push("body");
  return parts;
}
