import { withConnection } from "@svc/kernel/fetch";
import { honoComposition } from "../hono-app.js";

let app: ReturnType<typeof honoComposition> | undefined;

/**
 * The Hono composition as a Cloudflare Worker (workerd, run by miniflare), without the SOAP
 * endpoint: `@svc/soap-envelope/fetch` still needs Node.js modules. Built on the first request,
 * since a Worker may not draw random values at global scope. The client's address is
 * `CF-Connecting-IP`, which Cloudflare's edge sets (miniflare: the peer's).
 */
export default {
  fetch: withConnection(
    (request: Request, env: unknown) => {
      app ??= honoComposition(undefined);
      return app(request, env);
    },
    (request: Request) => ({ address: request.headers.get("cf-connecting-ip") ?? undefined }),
  ),
};
