import { honoConnection, withConnection } from "@svc/kernel/fetch";
import { soapEndpoint } from "@svc/soap-envelope/fetch";
import xsd from "../../../../packages/soap-envelope/src/__fixtures__/customer.xsd";
// The contract's documents as text, bundled with the Worker (esbuild's `text` loader; wrangler's
// `Text` module rule), since a Worker reads no file.
import wsdl from "../../../../packages/soap-envelope/src/__fixtures__/customer-both.wsdl";
import { honoComposition } from "../hono-app.js";
import { soapService } from "../soap-service.js";

let app: ReturnType<typeof honoComposition> | undefined;

/**
 * The Hono composition as a Cloudflare Worker (workerd, run by miniflare), the SOAP endpoint's
 * contract given in memory (`contract.documents`). Built on the first request, since a Worker may
 * not draw random values at global scope. The client's address is `CF-Connecting-IP`, which
 * Cloudflare's edge sets (miniflare: the peer's).
 */
export default {
  fetch: withConnection(
    (request: Request, env: unknown) => {
      app ??= honoComposition((trustProxy) => {
        const soap = soapEndpoint({
          ...soapService(),
          wsdl: "customer-both.wsdl",
          contract: { documents: { "customer-both.wsdl": wsdl, "customer.xsd": xsd } },
          trustProxy,
        });
        return { answer: (c) => soap(c.req.raw, honoConnection(c)) };
      });
      return app(request, env);
    },
    (request: Request) => ({ address: request.headers.get("cf-connecting-ip") ?? undefined }),
  ),
};
