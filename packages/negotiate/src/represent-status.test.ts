import { createPipeline, reply } from "@svc/kernel";
import { expressAdapter } from "@svc/kernel/express";
import { type Listening, listen } from "@svc/test-utils";
import express, { type NextFunction, type Request, type Response } from "express";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { representations } from "./representer.js";

const statusOf = (raw: string) => (raw === "text" ? ("201" as unknown as number) : Number(raw));

let server: Listening;
beforeAll(async () => {
  const svc = expressAdapter(createPipeline({ representations: representations() }));
  const app = express();
  app.use(svc.prepare);
  app.get(
    "/status/:value",
    svc.handle((req: Request) => reply({ id: 1 }, { status: statusOf(req.params.value as string) })),
  );
  app.use((err: { code?: string }, _req: Request, res: Response, _next: NextFunction) => {
    res.status(500).json({ code: err.code });
  });
  server = await listen(app);
});
afterAll(() => server.close());

describe("reply(data, { status }) sends a final response (RFC 9110 §15.2)", () => {
  // RFC 9110 §15.2: a 1xx is interim ("terminated by the end of the header section"); the client
  // goes on waiting for the final response, which never came: the request hung. 101 would also
  // claim a protocol switch without the Upgrade field §15.2.2 requires.
  it.each(["100", "101", "103", "99", "600", "201.5", "text"])(
    "status %s → the error handler's 500 with ERR_SVC_KERNEL_STATUS",
    async (value) => {
      expect(() => reply({ id: 1 }, { status: statusOf(value) })).toThrow(
        expect.objectContaining({ name: "TypeError", code: "ERR_SVC_KERNEL_STATUS" }),
      );
      const res = await fetch(`${server.url}/status/${value}`, { signal: AbortSignal.timeout(5000) });
      expect(res.status).toBe(500);
      expect(await res.json()).toEqual({ code: "ERR_SVC_KERNEL_STATUS" });
    },
  );

  it("status 201 → sent", async () => {
    const res = await fetch(`${server.url}/status/201`);
    expect(res.status).toBe(201);
    expect(await res.json()).toEqual({ id: 1 });
  });
});
