import { negotiate } from "@svc/negotiate";
import { express4, listen, express4Version as version } from "@svc/test-utils";
import { describe, expect, it, onTestFinished } from "vitest";
import { conditional } from "../src/index.js";

describe(`conditional() on Express ${version}`, () => {
  it("a strong ETag on the 200, then 304 for If-None-Match with it", async () => {
    expect(version).toMatch(/^4\./);
    const app = express4();
    app.use(negotiate());
    app.use(conditional());
    app.get("/countries", async (_req, res) => {
      await res.represent([{ code: "DE" }, { code: "FR" }]);
    });
    const { url, close } = await listen(app);
    onTestFinished(close);
    const first = await fetch(`${url}/countries`);
    expect(first.status).toBe(200);
    const etag = first.headers.get("etag");
    expect(etag).toMatch(/^"[^"]+"$/); // strong: no W/ prefix, not Express's weak tag
    const again = await fetch(`${url}/countries`, { headers: { "If-None-Match": etag as string } });
    expect(again.status).toBe(304);
  });

  it("GET with a stale If-Match → 412 error record; If-None-Match with a comma in the tag → 304", async () => {
    const app = express4();
    app.use(negotiate());
    app.use(conditional());
    app.get("/countries", async (_req, res) => {
      await res.represent([{ code: "DE" }, { code: "FR" }]);
    });
    app.get("/comma", (_req, res) => {
      res.setHeader("ETag", '"a,b"');
      res.json({ ok: true });
    });
    const { url, close } = await listen(app);
    onTestFinished(close);
    const etag = (await fetch(`${url}/countries`)).headers.get("etag") as string;
    // RFC 9110 §13.1.1: a false If-Match → the method is not performed, 412.
    const stale = await fetch(`${url}/countries`, { headers: { "If-Match": '"stale"' } });
    expect(stale.status).toBe(412);
    expect(stale.headers.get("etag")).toBe(etag);
    expect(stale.headers.get("cache-control")).toBe("no-store");
    expect(await stale.json()).toMatchObject({
      status: 412,
      error: "Precondition Failed",
      path: "/countries",
    });
    expect((await fetch(`${url}/countries`, { headers: { "If-Match": etag } })).status).toBe(200);
    // RFC 9110 §8.8.3: etagc includes ",".
    expect((await fetch(`${url}/comma`, { headers: { "If-None-Match": '"a,b"' } })).status).toBe(304);
  });

  it("a response that sets a cookie gets the default as private, no-cache (RFC 9111 §7.3), its 304 too", async () => {
    const app = express4();
    app.use(conditional());
    app.get("/me", (_req, res) => {
      res.cookie("sid", "secret-session");
      res.json({ id: 1 });
    });
    const { url, close } = await listen(app);
    onTestFinished(close);
    const first = await fetch(`${url}/me`);
    expect(first.headers.get("cache-control")).toBe("private, no-cache");
    const again = await fetch(`${url}/me`, {
      headers: { "If-None-Match": first.headers.get("etag") as string },
    });
    expect(again.status).toBe(304);
    expect(again.headers.get("cache-control")).toBe("private, no-cache");
  });
  // Express 4 still takes the deprecated res.send(status, body) and res.send(body, status); the
  // wrapper of conditional() passed on the first argument alone, so res.send(201, "created") sent
  // Express's "Created" and res.send("moved", 201) a 200.
  it('res.send(201, "made") and res.send("made", 202) → the status and the body the handler gave', async () => {
    const app = express4();
    app.use(conditional());
    app.get("/status-first", (_req, res) => {
      (res.send as unknown as (status: number, body: string) => void)(201, "made");
    });
    app.get("/body-first", (_req, res) => {
      (res.send as unknown as (body: string, status: number) => void)("made", 202);
    });
    const { url, close } = await listen(app);
    onTestFinished(close);
    const first = await fetch(`${url}/status-first`);
    expect(first.status).toBe(201);
    expect(await first.text()).toBe("made");
    const second = await fetch(`${url}/body-first`);
    expect(second.status).toBe(202);
    expect(await second.text()).toBe("made");
  });
});
