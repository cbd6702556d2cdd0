import { type Listening, listen, rawExchange } from "@svc/test-utils";
import express, { type NextFunction, type Request, type RequestHandler, type Response } from "express";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mountAt } from "./mount-at.js";

// What the mounted handlers and the handler after them see, for the same requests, with
// mountAt and with the router's use(prefix, ...) it stands in for.
const seen: RequestHandler = (req, res, next) => {
  res.append("X-Inside", `${req.baseUrl}|${req.url}|${req.path}`);
  next();
};
const answerAtRoot: RequestHandler = (req, res, next) => {
  if (req.path !== "/") return next();
  if (req.query.fail !== undefined) return next(new Error("failed inside"));
  res.json({ inside: res.getHeader("X-Inside"), baseUrl: req.baseUrl, url: req.url, query: req.query });
};
const after = (req: Request, res: Response) => {
  res
    .status(404)
    .json({ after: true, baseUrl: req.baseUrl, url: req.url, inside: res.getHeader("X-Inside") ?? null });
};
const onError = (err: Error, req: Request, res: Response, _next: NextFunction) => {
  res.status(500).json({ error: err.message, baseUrl: req.baseUrl, url: req.url });
};

let ours: Listening;
let router: Listening;
beforeAll(async () => {
  const a = express();
  a.use(mountAt("/ws/customer", seen, answerAtRoot));
  a.use(after);
  a.use(onError);
  ours = await listen(a);
  const b = express();
  const r = express.Router();
  r.use("/ws/customer", seen, answerAtRoot);
  b.use(r);
  b.use(after);
  b.use(onError);
  router = await listen(b);
});
afterAll(async () => {
  await ours.close();
  await router.close();
});

const paths = [
  "/ws/customer",
  "/ws/customer/",
  "/ws/customer?wsdl",
  "/ws/customer/?xsd=1",
  "/WS/Customer",
  "/ws/CUSTOMER?wsdl&x=1",
  "/ws/customer/x",
  "/ws/customer/x?y=1",
  "/ws/customerx",
  "/ws/custome",
  "/ws/customer.wsdl",
  "/ws",
  "/",
  "/other/ws/customer",
  "/ws/customer?fail=1",
  "/ws/customer//",
];

// RFC 9112 §3.2.2: a server must accept a target in absolute-form, which fetch never sends.
const absolute = [
  "http://x/ws/customer",
  "http://x/ws/customer?wsdl",
  "http://x/WS/Customer/?xsd=1",
  "http://x/ws/customer/x?y=1",
  "http://x/ws/customerx",
  "http://x/other/ws/customer",
  "http://x/",
  "https://x:8443/ws/customer?fail=1",
  "http://x/other/http://x/ws/customer",
  "http://x?/ws/customer",
];

/** Status and JSON body of `GET <target>` sent as it is written. */
async function rawGet(base: string, target: string): Promise<{ status: number; body: unknown }> {
  const { status, body } = await rawExchange(base, `GET ${target} HTTP/1.1\r\nHost: x`);
  return { status, body: JSON.parse(body) };
}

describe("mountAt", () => {
  it.each(absolute)("%s (absolute-form): what a router.use would give", async (target) => {
    const [mine, theirs] = await Promise.all([rawGet(ours.url, target), rawGet(router.url, target)]);
    expect(mine).toEqual(theirs);
  });

  it.each(paths)(
    "%s: what the handlers and the rest of the app see is what a router.use would give",
    async (path) => {
      const [mine, theirs] = await Promise.all([fetch(`${ours.url}${path}`), fetch(`${router.url}${path}`)]);
      expect(mine.status).toBe(theirs.status);
      expect(await mine.json()).toEqual(await theirs.json());
    },
  );

  it("runs only for its prefix: /ws/customer answers, /ws/customerx reaches the next handler unchanged", async () => {
    const hit = await fetch(`${ours.url}/ws/customer?wsdl`);
    expect(await hit.json()).toMatchObject({ baseUrl: "/ws/customer", url: "/?wsdl" });
    const miss = await fetch(`${ours.url}/ws/customerx`);
    expect(await miss.json()).toEqual({ after: true, baseUrl: "", url: "/ws/customerx", inside: null });
  });

  it.each(["ws/customer", "/ws/customer/", "/ws?x", ""])("prefix %j → TypeError", (prefix) => {
    expect(() => mountAt(prefix)).toThrow(TypeError);
  });
});
