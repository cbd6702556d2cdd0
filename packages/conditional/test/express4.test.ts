import { errorHandler } from "@svc/errors/express";
import { createPipeline, reply } from "@svc/kernel";
import { expressAdapter } from "@svc/kernel/express";
import { representations } from "@svc/negotiate";
import { express4, listen, express4Version as version } from "@svc/test-utils";
import { describe, expect, it, onTestFinished } from "vitest";
import { validators } from "../src/index.js";

const quiet = { logger: { error: () => {} } };

describe(`validators() through the pipeline on Express ${version}`, () => {
  it("a strong ETag on the 200, then 304 for If-None-Match with it", async () => {
    expect(version).toMatch(/^4\./);
    const svc = expressAdapter(
      createPipeline({ representations: representations(), validators: validators() }),
    );
    const app = express4();
    app.use(svc.prepare);
    app.get(
      "/countries",
      svc.handle(async () => [{ code: "DE" }, { code: "FR" }]),
    );
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
    const svc = expressAdapter(
      createPipeline({ representations: representations(), validators: validators() }),
    );
    const app = express4();
    app.get(
      "/countries",
      svc.handle(async () => [{ code: "DE" }, { code: "FR" }]),
    );
    app.get(
      "/comma",
      svc.handle(() => reply({ ok: true }, { headers: { ETag: '"a,b"' } })),
    );
    app.use(errorHandler(quiet));
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
    const svc = expressAdapter(createPipeline({ validators: validators() }));
    const app = express4();
    app.get(
      "/me",
      (_req, res, next) => {
        res.cookie("sid", "secret-session");
        next();
      },
      svc.handle(() => ({ id: 1 })),
    );
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

  it("a reply of 201 or 202 with text → the status and the body the handler gave", async () => {
    const svc = expressAdapter(createPipeline({ validators: validators() }));
    const app = express4();
    app.get(
      "/created",
      svc.handle(() => reply.bytes("made", "text/plain", { status: 201 })),
    );
    app.get(
      "/accepted",
      svc.handle(() => reply.bytes("made", "text/plain", { status: 202 })),
    );
    const { url, close } = await listen(app);
    onTestFinished(close);
    const first = await fetch(`${url}/created`);
    expect(first.status).toBe(201);
    expect(await first.text()).toBe("made");
    const second = await fetch(`${url}/accepted`);
    expect(second.status).toBe(202);
    expect(await second.text()).toBe("made");
  });
});
