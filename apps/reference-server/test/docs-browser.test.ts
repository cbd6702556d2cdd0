import { existsSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Started, sqlite } from "./harness.js";

/** Debian's chromium; CHROMIUM_PATH points elsewhere. */
const chromiumPath = [process.env.CHROMIUM_PATH, "/usr/bin/chromium", "/usr/bin/chromium-browser"].find(
  (p): p is string => typeof p === "string" && existsSync(p),
);
if (!chromiumPath)
  console.warn("[skip] chromium is not installed: the /docs page is not checked in a browser");

/** The docs page renders in a real headless browser, with every asset from this origin. */
describe.skipIf(!chromiumPath)("/docs in headless chromium", () => {
  let s: Started;
  beforeAll(async () => {
    s = await sqlite.start();
  });
  afterAll(() => s.stop());

  // Launching chromium and rendering the page takes seconds when the machine is idle and far more
  // when the whole suite runs beside it on two cores; the test's own limit is generous so that only
  // a page that never renders fails it.
  it("renders the operations of /openapi.json without a single request to another origin", {
    timeout: 120_000,
  }, async () => {
    const { chromium } = await import("playwright-core");
    const browser = await chromium.launch({ executablePath: chromiumPath as string, args: ["--no-sandbox"] });
    try {
      const page = await browser.newPage();
      const foreign: string[] = [];
      const errors: string[] = [];
      page.on("request", (r) => {
        if (!r.url().startsWith(s.url) && !r.url().startsWith("data:")) foreign.push(r.url());
      });
      page.on("pageerror", (e) => errors.push(e.message));
      await page.goto(`${s.url}/docs`, { timeout: 90_000 });
      await page.waitForSelector(".opblock", { timeout: 90_000 });
      const text = await page.textContent("body");
      expect(text).toContain("/employees");
      expect(await page.locator(".opblock").count()).toBeGreaterThan(30);
      expect(foreign).toEqual([]);
      expect(errors).toEqual([]);
    } finally {
      await browser.close();
    }
  });
});
