import { randomUUID } from "node:crypto";
import { errorHandler } from "@svc/errors/express";
import { MemoryStore } from "@svc/idempotency";
import { idempotency } from "@svc/idempotency/express";
import { createPipeline, reply } from "@svc/kernel";
import { expressAdapter } from "@svc/kernel/express";
import { representations } from "@svc/negotiate";
import { parseBody } from "@svc/negotiate/express";
import { type Listening, listen } from "@svc/test-utils";
import express from "express";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

/**
 * An app made only from the packages, as their READMEs compose them: a write whose `Accept` the
 * created resource cannot meet is answered in the default representation (RFC 9110 §12.5.1), so
 * the idempotency key records that answer and a retry replays it instead of writing again; a
 * write whose `Accept` no representation offered meets is refused before it runs.
 */
describe("packages only: the pipeline's representations() + idempotency() on a write", () => {
  let server: Listening;
  let writes = 0;
  beforeAll(async () => {
    const app = express();
    const svc = expressAdapter(createPipeline({ representations: representations() }));
    app.use(svc.prepare);
    app.post(
      "/transfers",
      parseBody(),
      svc.handle(
        async (req: express.Request) => {
          writes++;
          // The created transfer has a JSON representation only.
          return reply(
            { id: writes, ...(req.body as object) },
            { status: 201, headers: { Location: `/transfers/${writes}` }, only: ["application/json"] },
          );
        },
        { idempotency: idempotency({ store: new MemoryStore(), required: true }) },
      ),
    );
    app.use(errorHandler());
    server = await listen(app);
  });
  afterAll(() => server.close());

  const post = (key: string, accept: string) =>
    fetch(`${server.url}/transfers`, {
      method: "POST",
      headers: { "content-type": "application/json", "idempotency-key": key, accept },
      body: JSON.stringify({ amount: 1 }),
    });

  it.each(["application/xml", "text/csv, text/html;q=0.5"])(
    "30 keys, Accept: %s, each sent twice → 30 writes, every answer 201 JSON, no 406",
    async (accept) => {
      const before = writes;
      const statuses: number[] = [];
      for (let i = 0; i < 30; i++) {
        const key = randomUUID();
        for (let attempt = 0; attempt < 2; attempt++) {
          const res = await post(key, accept);
          statuses.push(res.status);
          expect(res.headers.get("content-type")).toBe("application/json; charset=utf-8");
          expect(((await res.json()) as { amount: number }).amount).toBe(1);
        }
      }
      expect(statuses.filter((s) => s !== 201)).toEqual([]);
      expect(writes).toBe(before + 30);
    },
  );

  it.each(["image/png", "application/pdf, text/calendar"])(
    "Accept: %s (no representation offered) → 406 before the write, sent twice: no write",
    async (accept) => {
      const before = writes;
      const key = randomUUID();
      for (let attempt = 0; attempt < 2; attempt++) expect((await post(key, accept)).status).toBe(406);
      expect(writes).toBe(before);
    },
  );
});
