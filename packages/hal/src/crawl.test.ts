import { listen, simulatedProxy } from "@svc/test-utils";
import express from "express";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { crawlLinks, templateVariables } from "./crawl.js";
import { externalOrigin, hrefFor } from "./express.js";
import { pageModel, parsePageRequest } from "./page.js";
import { hal } from "./resource.js";

const employees = [1, 2, 3].map((id) => ({ id, name: `E${id}` }));
const routes = ["/employees", "/employees/:id", "/departments/{id}"];

function service(options: { broken?: boolean; internal?: boolean } = {}) {
  const app = express();
  app.set("trust proxy", "loopback");
  const employee = (req: express.Request, e: { id: number; name: string }) =>
    hal(e)
      .link("self", hrefFor(req, `/employees/${e.id}`))
      .link("department", hrefFor(req, "/departments/1"))
      .link("search", { href: hrefFor(req, "/employees{?name,page,size}"), templated: true });
  app.get("/employees", (req, res) => {
    const { page, size } = parsePageRequest(req.query, { defaultSize: 2 });
    const items = employees.slice((page - 1) * size, page * size).map((e) => employee(req, e));
    const model = pageModel({
      collection: "employees",
      items,
      page,
      size,
      totalElements: employees.length,
      url: req.originalUrl,
      origin: externalOrigin(req),
    });
    res.type("application/hal+json").send(JSON.stringify(model));
  });
  app.get("/employees/:id", (req, res) => {
    const e = employees.find((x) => String(x.id) === req.params.id);
    if (!e) return void res.status(404).json({ status: 404 });
    const doc = employee(req, e);
    if (options.broken && e.id === 3) doc.link("manager", "/employees/99");
    if (options.internal && e.id === 2) doc.link("update", "/internal/admin");
    if (options.broken && e.id === 1) {
      return void res.json({
        id: 1,
        _links: { manager: { href: "/employees/2" } },
        _embedded: { "a/b": [{ _links: { next: "/employees/3" } }] },
      });
    }
    res.json(doc);
  });
  app.get("/departments/:id", (req, res) => {
    res.json(
      hal({ id: 1 }).link("self", hrefFor(req, "/departments/1")).curie("x", "https://docs.invalid/{rel}"),
    );
  });
  return app;
}

describe("crawlLinks against a real server", () => {
  const open: { close: () => Promise<void> }[] = [];
  afterAll(async () => {
    await Promise.all(open.map((s) => s.close()));
  });
  let good: string;
  let bad: string;
  beforeAll(async () => {
    const a = await listen(service());
    const b = await listen(service({ broken: true, internal: true }));
    open.push(a, b);
    good = a.url;
    bad = b.url;
  });

  it("a consistent service → every link resolves, nothing undeclared", async () => {
    const report = await crawlLinks(good, "/employees", { allowedRoutes: routes });
    expect(report.broken).toEqual([]);
    expect(report.undeclared).toEqual([]);
    expect(report.missingSelf).toEqual([]);
    expect(report.ok).toBe(true);
    expect(report.visited).toContain(`${good}/employees/3`);
    expect(report.visited).toContain(`${good}/departments/1`);
    // the templated search link, expanded with sample values
    expect(report.visited).toContain(`${good}/employees?name=1&page=1&size=1`);
  });

  it("a link to /employees/99 and one to /internal/admin → reported as broken and undeclared", async () => {
    const report = await crawlLinks(bad, "/employees", { allowedRoutes: routes });
    expect(report.ok).toBe(false);
    expect(report.broken).toEqual([
      {
        href: `${bad}/employees/99`,
        from: `${bad}/employees/3`,
        rel: "manager",
        reason: "status",
        status: 404,
      },
    ]);
    expect(report.undeclared).toEqual([
      { href: `${bad}/internal/admin`, from: `${bad}/employees/2`, rel: "update", reason: "undeclared" },
    ]);
    expect(report.missingSelf).toEqual([
      { url: `${bad}/employees/1`, pointer: "" },
      { url: `${bad}/employees/1`, pointer: "/_embedded/a~1b/0" },
    ]);
  });

  it("behind a trusted proxy naming api.example.com → links point there and are reported external", async () => {
    const proxy = await simulatedProxy(good, { "x-forwarded-host": "api.example.com" });
    open.push(proxy);
    const report = await crawlLinks(proxy.url, "/employees/1", { allowedRoutes: routes });
    expect(report.undeclared.map((p) => p.reason)).toContain("external");
    expect(report.undeclared[0]?.href).toMatch(/^http:\/\/api\.example\.com\//);
  });

  it("sampleValues → used for template variables", async () => {
    const report = await crawlLinks(good, "/employees/1", {
      allowedRoutes: routes,
      sampleValues: { name: "E2", size: 5 },
    });
    expect(report.visited).toContain(`${good}/employees?name=E2&page=1&size=5`);
  });

  it("maxRequests: 2 → truncated, not ok", async () => {
    const report = await crawlLinks(good, "/employees", { maxRequests: 2 });
    expect(report.truncated).toBe(true);
    expect(report.ok).toBe(false);
  });

  it.each([[Number.NaN], [0], [-1], [2.5], [Number.POSITIVE_INFINITY], ["10"]])(
    "maxRequests: %s → refused with ERR_SVC_HAL_MAX_REQUESTS before any request",
    async (maxRequests) => {
      let requests = 0;
      const counting: typeof fetch = (input, init) => {
        requests++;
        return fetch(input, init);
      };
      await expect(
        crawlLinks(good, "/employees", { maxRequests: maxRequests as number, fetch: counting }),
      ).rejects.toMatchObject({ name: "TypeError", code: "ERR_SVC_HAL_MAX_REQUESTS" });
      expect(requests).toBe(0);
    },
  );

  it.each([[0], [-5], [Number.NaN], [2 ** 31]])(
    "timeoutMs: %s → refused with ERR_SVC_HAL_TIMEOUT_MS",
    async (timeoutMs) => {
      await expect(crawlLinks(good, "/employees", { timeoutMs })).rejects.toMatchObject({
        code: "ERR_SVC_HAL_TIMEOUT_MS",
      });
    },
  );

  it("a link whose target never answers, timeoutMs: 200 → broken (network), the crawl goes on", async () => {
    const app = express();
    app.get("/start", (_req, res) => {
      res.json({ _links: { self: { href: "/start" }, slow: { href: "/hang" }, next: { href: "/end" } } });
    });
    app.get("/hang", () => {
      // never answers
    });
    app.get("/end", (_req, res) => void res.json({ _links: { self: { href: "/end" } } }));
    const server = await listen(app);
    open.push(server);
    const report = await crawlLinks(server.url, "/start", { timeoutMs: 200 });
    expect(report.broken).toEqual([
      { href: `${server.url}/hang`, from: `${server.url}/start`, rel: "slow", reason: "network" },
    ]);
    expect(report.visited).toEqual([`${server.url}/start`, `${server.url}/hang`, `${server.url}/end`]);
  }, 5000);

  it("a start path that does not exist → broken", async () => {
    const report = await crawlLinks(good, "/nothing");
    expect(report.broken[0]).toMatchObject({ reason: "status", status: 404 });
  });

  it("templateVariables('{/a*}{?b,c:3}{&d}') → a, b, c, d", () => {
    expect(templateVariables("/x{/a*}{?b,c:3}{&d}")).toEqual(["a", "b", "c", "d"]);
  });
});
