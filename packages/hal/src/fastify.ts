/**
 * `@svc/hal/fastify`: the package on Fastify 5: the host check as a plugin (an `onRequest` hook)
 * and the base URL and links from a Fastify request.
 *
 * @packageDocumentation
 */

import {
  type BaseUrlOptions,
  externalBaseUrl,
  type HostCheckOptions,
  type HrefOptions,
  hostGate,
  hrefFor as hrefOf,
} from "@svc/hal";
import { appWide, fastifyGate, fastifyView } from "@svc/kernel/fastify";
import type { FastifyInstance, FastifyPluginCallback, FastifyRequest } from "fastify";

export type { BaseUrlOptions, HostCheckOptions, HrefOptions, TrustProxy, TrustProxyOption } from "@svc/hal";

/** Options of the {@link allowedHosts} plugin. */
export interface AllowedHostsOptions extends HostCheckOptions {
  /** The hosts the service answers for (see `createHostCheck`), or `"*"` for any valid host. */
  hosts: readonly string[] | "*";
}

/**
 * The host check as a Fastify plugin: `app.register(allowedHosts, { hosts, trustProxy, forwardedHeaders })`, an
 * `onRequest` hook for the context it is registered in and those inside it (app-wide there: a
 * host check that stopped at its own encapsulation would leave the routes beside it open). A
 * host the service does not answer for is the 421 `misdirected_request` (400 `invalid_host` for
 * a malformed one), for Fastify's error handler (`@svc/errors/fastify`). Behind the proxies
 * Fastify's own `trustProxy` server option trusts, the forwarded host is the one checked, unless
 * the plugin's `trustProxy` option names others.
 *
 * @example
 * const app = Fastify({ trustProxy: fastifyTrustProxy("loopback") });
 * await app.register(allowedHosts, { hosts: ["api.example.com"] });
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-15.5.20
 */
export const allowedHosts: FastifyPluginCallback<AllowedHostsOptions> = appWide(
  "@svc/hal/allowed-hosts",
  (app: FastifyInstance, options: AllowedHostsOptions, done: (err?: Error) => void) => {
    const { hosts, trustProxy, forwardedHeaders } = options;
    let gate: ReturnType<typeof hostGate>;
    try {
      gate = hostGate(hosts, {
        ...(trustProxy === undefined ? {} : { trustProxy }),
        ...(forwardedHeaders === undefined ? {} : { forwardedHeaders }),
      });
    } catch (err) {
      done(err as Error);
      return;
    }
    app.addHook("onRequest", fastifyGate(gate));
    done();
  },
);

/**
 * The external base URL of the service for a Fastify request (`externalBaseUrl` of its
 * `fastifyView`), behind the proxies `trustProxy` trusts, by default those of Fastify's own
 * `trustProxy` server option.
 *
 * @example pageModel({ ..., url: request.url, origin: baseUrl(request) })
 * @see https://www.rfc-editor.org/rfc/rfc7239
 */
export function baseUrl(request: FastifyRequest, options: BaseUrlOptions = {}): string {
  return externalBaseUrl(fastifyView(request), options);
}

/**
 * The href for a path of this service (`hrefFor` of `@svc/hal`) from a Fastify request, behind
 * the proxies `trustProxy` trusts, by default those of Fastify's own `trustProxy` server option.
 *
 * @example hal(employee).link("self", hrefFor(request, `/employees/${employee.id}`))
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-10.2.2
 */
export function hrefFor(request: FastifyRequest, path: string, options?: HrefOptions): string {
  return hrefOf(fastifyView(request), path, options);
}
