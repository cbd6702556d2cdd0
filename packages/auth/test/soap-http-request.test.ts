import { createServer } from "node:http";
import { errorPlugin } from "@svc/errors/fastify";
import { createRateLimiter, MemoryStore } from "@svc/ratelimit";
import { type Listening, listenOn } from "@svc/test-utils";
import Fastify, { type FastifyInstance, type FastifyRequest } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createBasicVerifier } from "../src/basic-verifier.js";
import { auth } from "../src/fastify.js";
import { authenticate as nodeAuthenticate } from "../src/node.js";
import { createSoapCredentialsVerifier, SoapAuthError, type SoapCredentialsVerifier } from "../src/soap.js";
import { headerBlocks } from "./helpers.js";

const PASSWORDS: Record<string, string> = { bob: "hunter2", eve: "guess" };
const verify = (u: string, p: string) => (PASSWORDS[u] === p ? { id: u, roles: ["clerk"] } : null);
const basicOf = (user: string, password: string) =>
  `Basic ${Buffer.from(`${user}:${password}`).toString("base64")}`;
const authBlock = (user: string, password: string) =>
  `<Authentication><Username>${user}</Username><Password>${password}</Password></Authentication>`;
const envelope = (header: string) =>
  `<soap:Envelope xmlns:soap="http://www.w3.org/2003/05/soap-envelope"><soap:Header>${header}</soap:Header><soap:Body/></soap:Envelope>`;

/** What the SOAP service hands the hook: the `node:http` request (`request.raw` on Fastify). */
async function answer(soap: SoapCredentialsVerifier, body: string, http: object) {
  try {
    return { status: 200, body: await soap.authenticate(headerBlocks(body), { http: http as never }) };
  } catch (err) {
    if (err instanceof SoapAuthError) return { status: 401, body: { code: err.code } };
    const status = (err as { status?: number }).status ?? 500;
    return { status, body: { status } };
  }
}

const post = (url: string, header: string, headers: Record<string, string> = {}) =>
  fetch(url, { method: "POST", headers: { "content-type": "text/xml", ...headers }, body: envelope(header) });

// The SOAP adapters of @svc/soap-envelope give the hook the `node:http` request: on Fastify
// `request.raw`, where neither the principal @svc/auth's plugin found from `Authorization` nor
// the client address Fastify resolved behind its `trustProxy` is, unless the plugin leaves them.
describe("@svc/auth/fastify: the SOAP credentials hook, given request.raw", () => {
  let app: FastifyInstance;
  let url: string;
  beforeAll(async () => {
    // Three failed checks per client: the budget that would lock a whole proxy out if every
    // client behind it were counted as the proxy.
    const perClient = createRateLimiter({ limit: 3, windowMs: 60_000, store: new MemoryStore() });
    const soap = createSoapCredentialsVerifier({
      verifier: createBasicVerifier({ verify, failureLimit: { perClient } }),
    });
    app = Fastify({ trustProxy: "127.0.0.1" });
    await app.register(errorPlugin);
    await app.register(auth, { realm: "soap", basic: { verify }, optional: true });
    app.addContentTypeParser("text/xml", { parseAs: "string" }, (_req, body, done) => done(null, body));
    app.post("/soap", async (request: FastifyRequest, reply) => {
      const { status, body } = await answer(soap, String(request.body), request.raw);
      return reply.code(status).send(body);
    });
    await app.listen({ port: 0, host: "127.0.0.1" });
    url = `http://127.0.0.1:${(app.server.address() as { port: number }).port}/soap`;
  });
  afterAll(() => app.close());

  it("no header credentials, Basic in Authorization → the principal the plugin found", async () => {
    const res = await post(url, "", { authorization: basicOf("bob", "hunter2") });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ id: "bob", scheme: "basic" });
  });

  it("no credentials at all → FailedAuthentication", async () => {
    const res = await post(url, "");
    expect(res.status).toBe(401);
    expect(await res.json()).toEqual({ code: "FailedAuthentication" });
  });

  it("header and Authorization naming different users → InvalidSecurity", async () => {
    const res = await post(url, authBlock("bob", "hunter2"), { authorization: basicOf("eve", "guess") });
    expect(await res.json()).toEqual({ code: "InvalidSecurity" });
  });

  it("3 wrong header passwords from one client behind the proxy → that client refused, another still verified", async () => {
    const from = (client: string) => ({ "x-forwarded-for": client });
    for (let i = 0; i < 3; i++)
      expect((await post(url, authBlock("bob", `no${i}`), from("203.0.113.1"))).status).toBe(401);
    expect((await post(url, authBlock("bob", "hunter2"), from("203.0.113.1"))).status).toBe(429);
    const other = await post(url, authBlock("bob", "hunter2"), from("203.0.113.2"));
    expect(other.status).toBe(200);
    expect(await other.json()).toMatchObject({ id: "bob", scheme: "soap" });
  });
});

describe("@svc/auth/node: the SOAP credentials hook, given the request authenticate() read", () => {
  let server: Listening;
  beforeAll(async () => {
    const soap = createSoapCredentialsVerifier({ verify });
    const authenticate = nodeAuthenticate({ realm: "soap", basic: { verify }, optional: true });
    server = await listenOn(
      createServer(async (req, res) => {
        const chunks: Buffer[] = [];
        for await (const chunk of req) chunks.push(chunk as Buffer);
        await authenticate(req);
        const { status, body } = await answer(soap, Buffer.concat(chunks).toString("utf8"), req);
        res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
      }),
    );
  });
  afterAll(() => server.close());

  it("no header credentials, Basic in Authorization → the principal authenticate() found", async () => {
    const res = await post(`${server.url}/soap`, "", { authorization: basicOf("bob", "hunter2") });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ id: "bob", scheme: "basic" });
  });
});
