import { honoConnection } from "@svc/kernel/fetch";
import { soapEndpoint } from "@svc/soap-envelope/fetch";
import { honoComposition } from "./hono-app.js";
import { soapOptions } from "./soap.js";

/**
 * The composition on Hono with the SOAP endpoint (served on Node by `@hono/node-server`, and by
 * `Bun.serve` and `Deno.serve` in `runtimes/`). What the server passes beside the `Request`
 * (`env`: `@hono/node-server`'s `incoming`, Bun's server, Deno's `info`) goes to Hono as `c.env`.
 */
export function honoApp(): (request: Request, env?: unknown) => Response | Promise<Response> {
  return honoComposition((trustProxy) => {
    const soap = soapEndpoint({ ...soapOptions(), trustProxy });
    return { answer: (c) => soap(c.req.raw, honoConnection(c)) };
  });
}
