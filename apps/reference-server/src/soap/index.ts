import { join } from "node:path";
import type { NonceStore } from "@svc/auth";
import { requestState } from "@svc/kernel";
import { chain } from "@svc/kernel/express";
import { compression } from "@svc/negotiate";
import { type SoapEndpointOptions, soapFaults, WSSE_NS } from "@svc/soap-envelope";
import { soapEndpoint } from "@svc/soap-envelope/express";
import express, { type RequestHandler } from "express";
import type { Config } from "../config.js";
import type { Db } from "../db/database.js";
import { loose } from "../db/query.js";
import { mountAt } from "../mount-at.js";
import type { Svc } from "../pipeline.js";
import { NO_STORE } from "../routes/catalogue.js";
import { type CrudResource, mountCrud, resourceView } from "../routes/crud.js";
import { expressRoutes } from "../routes/guarded.js";
import { authentication, permission, type Security } from "../security.js";
import { authorizeSoap, soapAuthenticator } from "./credentials.js";
import type { CustomerServiceOperations } from "./customer.types.js";
import type { PriceServiceOperations } from "./price.types.js";
import { CONTRACTS_DIR, customerHandlers, priceHandlers } from "./services.js";

export { soapTablesMigration } from "./migration.js";

/** What the SOAP services need from the app: the same database, users and rate limit. */
export interface SoapDeps {
  db: Db;
  security: Security;
  /** The resource API's rate limiter: SOAP calls spend the same budget. */
  limiter: RequestHandler;
  /** WS-Security nonces already seen: shared by the fleet when Redis is configured. */
  nonces: NonceStore;
  /** The response pipeline of the resource API, which `/events` and `/notifications` belong to. */
  svc: Svc;
}

/** SOAP endpoints (spec part 4.2): the customer service and the price service. */
export const CUSTOMER_PATH = "/ws/customer";
export const PRICE_PATH = "/ws/PriceService";
/**
 * The endpoints' errors as SOAP faults, rendered by the app's one error handler (`renderers` of
 * `@svc/errors`) on Express and on Fastify: every contract here binds SOAP 1.2 only, so a
 * `text/xml` request refused in front gets a 1.2 fault.
 */
export const SOAP_FAULTS = soapFaults({ path: [CUSTOMER_PATH, PRICE_PATH], versions: ["1.2"] });
/** The target namespaces of contracts/customer.xsd and contracts/price.xsd (spec part 9 rule 3). */
const CUSTOMER_NS = "http://svc.example.com/ws/customer/v1";
const PRICE_NS = "http://svc.example.com/ws/price/v1";

/**
 * The header blocks an endpoint's `authenticate` hook consumes: `wsse:Security` and the
 * `Authentication` block of its own contract only. An `Authentication` block of any other namespace
 * is a block this node does not understand (SOAP 1.2 Part 1 §2.4, §5.2.1): ignored, or a
 * MustUnderstand fault when it is mandatory.
 */
function credentialHeaders(namespace: string): string[] {
  return [`{${WSSE_NS}}Security`, `{${namespace}}Authentication`];
}

/** Events stored by logEvent, listed through the resource API. */
export const events: CrudResource = {
  path: "/events",
  collection: "events",
  noun: "Event",
  table: "events",
  base: (db) => loose(db).selectFrom("events as t").selectAll("t"),
  list: {
    filters: {
      type: { column: "t.type", match: "eq" },
      severity: { column: "t.severity", match: "eq" },
      customerId: { column: "t.customer_id", match: "eq" },
    },
    sort: { id: "t.id", receivedAt: "t.received_at" },
  },
  view: (r, { href }) =>
    resourceView(
      {
        id: Number(r.id),
        type: r.type,
        severity: r.severity,
        message: r.message,
        occurredAt: r.occurred_at ?? null,
        // An xs:long the client chose: a string, so no digit is lost past 2^53.
        customerId: r.customer_id ?? null,
        receivedAt: r.received_at,
        submittedBy: r.submitted_by,
      },
      href(`/events/${r.id}`),
    ),
  writes: [],
  cacheControl: NO_STORE,
};

/** Notifications queued by sendNotification, listed through the resource API. */
export const notifications: CrudResource = {
  path: "/notifications",
  collection: "notifications",
  noun: "Notification",
  table: "notifications",
  base: (db) => loose(db).selectFrom("notifications as t").selectAll("t"),
  list: {
    filters: { status: { column: "t.status", match: "eq" } },
    sort: { id: "t.id", queuedAt: "t.queued_at" },
  },
  view: (r, { href }) =>
    resourceView(
      {
        id: Number(r.id),
        message: r.message,
        status: r.status,
        queuedAt: r.queued_at,
        submittedBy: r.submitted_by,
      },
      href(`/notifications/${r.id}`),
    ),
  writes: [],
  cacheControl: NO_STORE,
};

/**
 * The options of the customer and price endpoints (@svc/soap-envelope), whichever framework
 * serves them: the contracts, the handlers, the credentials of the SOAP Header or of HTTP.
 */
export function soapEndpointOptions(
  config: Config,
  deps: Pick<SoapDeps, "db" | "security" | "nonces">,
): {
  customer: SoapEndpointOptions<CustomerServiceOperations>;
  price: SoapEndpointOptions<PriceServiceOperations>;
} {
  const { db, security, nonces } = deps;
  return {
    customer: {
      wsdl: join(CONTRACTS_DIR, "customer.wsdl"),
      handlers: customerHandlers(db),
      authenticate: soapAuthenticator(config, security, nonces, CUSTOMER_NS),
      authenticateHeaders: credentialHeaders(CUSTOMER_NS),
      // Who may call an operation is decided before its Body is decoded (writes need `write`).
      authorize: authorizeSoap,
      // The WSDL, its schemas and the answers coded as the resource API's are (zeep asks gzip).
      coding: compression(),
    },
    price: {
      wsdl: join(CONTRACTS_DIR, "price.wsdl"),
      handlers: priceHandlers(db),
      authenticate: soapAuthenticator(config, security, nonces, PRICE_NS),
      authenticateHeaders: credentialHeaders(PRICE_NS),
      authorize: authorizeSoap,
      coding: compression(),
    },
  };
}

/**
 * The SOAP customer and price services (served by @svc/soap-envelope from the contracts in
 * `contracts/`) and the read-only `/events` and `/notifications` collections that show the
 * effect of the one-way operations. `endpoints` is mounted right after the app's security headers,
 * correlation id and access log, ahead of versioning, content negotiation and conditional requests:
 * SOAP has its own media type (415 otherwise), its version is the contract's namespace (spec part 9
 * rule 3) and its POST answers are never conditional, so those layers would only cost time there.
 * `collections` are resource API collections and come after them. Both precede the resource API,
 * whose authentication would answer a SOAP call with a JSON 401. The failures of the middleware in
 * front of an endpoint (429, a bad Authorization) are SOAP faults by the app's error handler
 * ({@link SOAP_FAULTS}).
 *
 * @example const soap = soapServices(config, { db, security, limiter, nonces: stores.nonces });
 * @see https://www.w3.org/TR/soap12-part2/#soapinhttp
 */
export function soapServices(
  config: Config,
  deps: SoapDeps,
): { endpoints: RequestHandler; collections: express.Router } {
  const { db, security, limiter, svc } = deps;
  const httpAuth = authentication(security);
  // Basic or Bearer when sent; a SOAP call may instead carry its credentials in the envelope.
  const optionalHttpAuth: RequestHandler = (req, res, next) => {
    if (requestState(req).principal || req.headers.authorization === undefined) return next();
    return httpAuth(req, res, next);
  };

  const { customer: customerOptions, price: priceOptions } = soapEndpointOptions(config, deps);
  const customer = soapEndpoint<CustomerServiceOperations>(customerOptions);
  const price = soapEndpoint<PriceServiceOperations>(priceOptions);

  // Each endpoint as `router.use(path, ...)` would mount it, without a router's layer matching.
  const atCustomer = mountAt(CUSTOMER_PATH, optionalHttpAuth, limiter, customer as RequestHandler);
  const atPrice = mountAt(PRICE_PATH, optionalHttpAuth, limiter, price as RequestHandler);
  const endpoints = chain(atCustomer, atPrice);

  // The collections get the resource API's authentication and rate limit, and its permission
  // check behind routing (a reader's POST /events is the 405 of a read-only collection, not a 403).
  // Routed like every other collection (app.ts ROUTING): case-sensitive and strict, so
  // `/events/` and `/events/1/` are 404, not a second URI of the collection and its items.
  const collections = express.Router({ caseSensitive: true, strict: true });
  collections.use(["/events", "/notifications"], httpAuth, limiter);
  const allowed = [permission() as RequestHandler];
  const guarded = expressRoutes(collections, svc, () => allowed);
  mountCrud(guarded, db, events);
  mountCrud(guarded, db, notifications);

  return { endpoints, collections };
}
