import { Readable } from "node:stream";
import { describe, expect, it } from "vitest";
import { HttpError } from "./http-error.js";
import { createPipeline, type PipelineOptions, type RouteOptions } from "./index.js";
import { type ResponseValue, reply } from "./response.js";
import type {
  Claim,
  Coder,
  Idempotency,
  PipelineRequest,
  Represented,
  Representer,
  Validators,
  Versioner,
} from "./steps.js";

const PREPARED = { version: undefined, refusal: undefined };

function request(method = "GET", headers: Record<string, string> = {}): PipelineRequest {
  return { view: { method, headers }, path: "/things/1" };
}

function text(value: ResponseValue): string {
  return Buffer.from(value.body as Uint8Array).toString("utf8");
}

/** Steps that write down what the pipeline asked of them, in order. */
function recording(outcome: "proceed" | 304 | 412 = "proceed", coding = "gzip") {
  const calls: string[] = [];
  const represented = (body: string): Represented => ({
    contentType: "text/plain; charset=utf-8",
    language: "en",
    body: Buffer.from(body),
    vary: ["Accept", "Accept-Language"],
  });
  const representations: Representer = {
    preflight: (_r, label, changesState, produces) =>
      void calls.push(
        `preflight ${label} ${changesState}${produces ? ` produces=[${produces.join(",")}]` : ""}`,
      ),
    represent: (_r, data, choice) => {
      calls.push(`represent ${String(data)} fallback=${choice.fallback}`);
      return represented(String(data));
    },
    async *variants(_r, data) {
      calls.push("variants");
      yield represented(String(data));
    },
  };
  const codingStep: Coder = {
    preflight: () => void calls.push("coding preflight"),
    choose: (_r, value, length) => {
      calls.push(`choose ${length}`);
      value.vary.push("Accept-Encoding");
      return coding;
    },
    encode: (c, body) => {
      calls.push(`encode ${c}`);
      return Buffer.concat([Buffer.from(`${c}:`), body as Uint8Array]);
    },
  };
  const validators: Validators = {
    validate: (_r, value, c) => {
      calls.push(`validate ${c}`);
      value.fields.etag = c === "identity" ? '"t"' : 'W/"t"';
    },
    evaluate: () => {
      calls.push("evaluate");
      return outcome;
    },
    notModified: (_r, value) => {
      calls.push("notModified");
      value.status = 304;
      value.fields["content-type"] = null;
    },
    failed: (value) => {
      calls.push("failed");
      return HttpError.preconditionFailed("changed", { headers: { ETag: String(value.fields.etag) } });
    },
    beforeWrite: async (_r, current, creates) => {
      calls.push(`beforeWrite ${current === undefined ? "absent" : "present"} ${creates}`);
      if (current !== undefined)
        for await (const v of current.variants) calls.push(`tag of ${v.contentType}`);
    },
  };
  return { calls, steps: { representations, coding: codingStep, validators } satisfies PipelineOptions };
}

describe("createPipeline(): the steps, in their one order", () => {
  it("no steps: data → 200 application/json, whatever Accept says; no Vary", async () => {
    const value = await createPipeline().respond(request("GET", { accept: "text/csv" }), PREPARED, {
      id: 7n,
      name: "Ada",
    });
    expect(value.status).toBe(200);
    expect(value.fields["content-type"]).toBe("application/json");
    expect(text(value)).toBe('{"id":7,"name":"Ada"}');
    expect(value.vary).toEqual([]);
  });

  it.each([
    ["reply.empty()", reply.empty(), 204],
    ["undefined", undefined, 204],
    ["reply(data, { status: 204 })", reply({ a: 1 }, { status: 204 }), 204],
    ["reply.empty({ status: 202 })", reply.empty({ status: 202 }), 202],
  ])("%s → %i without content and without representation fields", async (_name, result, status) => {
    const value = await createPipeline().respond(request(), PREPARED, result);
    expect(value.status).toBe(status);
    expect(value.body).toBeUndefined();
    if (status === 204) {
      expect(value.fields["content-type"]).toBeNull();
      expect(value.fields["content-length"]).toBeNull();
    }
  });

  it("reply headers → fields by lower-case name", async () => {
    const value = await createPipeline().respond(
      request("POST"),
      PREPARED,
      reply({ id: 1 }, { status: 201, headers: { Location: "/things/1", "Cache-Control": "no-store" } }),
    );
    expect(value.status).toBe(201);
    expect(value.fields).toMatchObject({ location: "/things/1", "cache-control": "no-store" });
  });

  it.each([99, 100, 199, 600, 200.5, "200", Number.NaN])(
    "reply(data, { status: %o }) → TypeError ERR_SVC_KERNEL_STATUS",
    (status) => {
      expect(() => reply({}, { status: status as number })).toThrow(
        expect.objectContaining({ name: "TypeError", code: "ERR_SVC_KERNEL_STATUS" }),
      );
    },
  );

  it("reply.bytes(body, '') → TypeError ERR_SVC_KERNEL_CONTENT_TYPE", () => {
    expect(() => reply.bytes("x", "")).toThrow(
      expect.objectContaining({ code: "ERR_SVC_KERNEL_CONTENT_TYPE" }),
    );
  });

  it("GET: represent → choose the coding → validate on it → evaluate → encode", async () => {
    const { calls, steps } = recording();
    const value = await createPipeline(steps).respond(request(), PREPARED, "hello");
    expect(calls).toEqual([
      "represent hello fallback=false",
      "choose 5",
      "validate gzip",
      "evaluate",
      "encode gzip",
    ]);
    expect(value.fields).toMatchObject({
      "content-type": "text/plain; charset=utf-8",
      "content-language": "en",
      "content-encoding": "gzip",
      "content-length": null,
      etag: 'W/"t"',
    });
    expect(value.vary).toEqual(["Accept", "Accept-Language", "Accept-Encoding"]);
    expect(text(value)).toBe("gzip:hello");
  });

  it("the steps given in another order run in the same order", async () => {
    const { calls, steps } = recording();
    const { validators, coding, representations } = steps;
    await createPipeline({ validators, coding, representations }).respond(request(), PREPARED, "x");
    expect(calls).toEqual([
      "represent x fallback=false",
      "choose 1",
      "validate gzip",
      "evaluate",
      "encode gzip",
    ]);
  });

  it("GET whose preconditions say 304 → notModified, no content, nothing coded", async () => {
    const { calls, steps } = recording(304);
    const value = await createPipeline(steps).respond(request(), PREPARED, "hello");
    expect(calls).toEqual([
      "represent hello fallback=false",
      "choose 5",
      "validate gzip",
      "evaluate",
      "notModified",
    ]);
    expect(value.status).toBe(304);
    expect(value.body).toBeUndefined();
    expect(value.fields["content-encoding"]).toBeUndefined();
  });

  it("GET whose preconditions say 412 → rejects with the validators' 412", async () => {
    const { calls, steps } = recording(412);
    await expect(createPipeline(steps).respond(request(), PREPARED, "hello")).rejects.toMatchObject({
      status: 412,
      headers: { ETag: 'W/"t"' },
    });
    expect(calls.at(-1)).toBe("failed");
  });

  it("412 in place of a streamed body → the stream is destroyed", async () => {
    const { steps } = recording(412);
    const stream = Readable.from(["a", "b"]);
    await expect(
      createPipeline(steps).respond(request(), PREPARED, reply.bytes(stream, "text/plain")),
    ).rejects.toMatchObject({ status: 412 });
    expect(stream.destroyed).toBe(true);
  });

  it("304 in place of a streamed body → the stream is destroyed", async () => {
    const { steps } = recording(304);
    const stream = Readable.from(["a", "b"]);
    await createPipeline(steps).respond(request(), PREPARED, reply.bytes(stream, "text/plain"));
    expect(stream.destroyed).toBe(true);
  });

  it("HEAD with a coding → Content-Encoding as its GET, no content, no Content-Length, nothing coded", async () => {
    const { calls, steps } = recording();
    const value = await createPipeline(steps).respond(request("HEAD"), PREPARED, "hello");
    expect(calls).not.toContain("encode gzip");
    expect(value.fields["content-encoding"]).toBe("gzip");
    expect(value.fields["content-length"]).toBeNull();
    expect(value.body).toBeUndefined();
  });

  it.each(["POST", "PUT", "PATCH", "DELETE"])(
    "%s: not evaluated for 304/412 after the handler; the representation falls back rather than 406",
    async (method) => {
      const { calls, steps } = recording(412);
      const value = await createPipeline(steps).respond(request(method), PREPARED, "done");
      expect(calls).toEqual([`represent done fallback=true`, "choose 4", "validate gzip", "encode gzip"]);
      expect(value.status).toBe(200);
    },
  );

  it("a 4xx reply is not validated (no ETag), its Last-Modified still sent", async () => {
    const { calls, steps } = recording();
    const value = await createPipeline(steps).respond(
      request(),
      PREPARED,
      reply({ e: 1 }, { status: 409, lastModified: new Date("2026-01-02T03:04:05Z") }),
    );
    expect(calls).not.toContain("validate gzip");
    expect(value.fields.etag).toBeUndefined();
    expect(value.fields["last-modified"]).toBe("Fri, 02 Jan 2026 03:04:05 GMT");
  });

  it("a 4xx reply goes to the step's optional settle(), with its coding decided", async () => {
    const { calls, steps } = recording();
    const settled: string[] = [];
    const validators = {
      ...steps.validators,
      settle: (_r: unknown, v: { status: number }, c: string) => void settled.push(`${v.status} ${c}`),
    };
    await createPipeline({ ...steps, validators }).respond(
      request(),
      PREPARED,
      reply({ e: 1 }, { status: 409 }),
    );
    expect(calls).not.toContain("validate gzip");
    expect(settled).toEqual(["409 gzip"]);
  });
});

describe("prepare(): decided before routing and before the handler", () => {
  const versioning = (error?: HttpError): Versioner => ({
    resolve: (_r, target) => ({
      target: target.replace(/^\/v2/, ""),
      version: 2,
      prefix: "/v2",
      label: "application/vnd.x.v2+json",
      fields: { "api-supported-versions": "1, 2" },
      vary: [],
      error,
    }),
  });

  it("GET: the version decided and the coding's preflight; what the route answers is not known yet", () => {
    const { calls, steps } = recording();
    const prepared = createPipeline({ ...steps, versioning: versioning() }).prepare(
      request(),
      "/v2/things/1",
    );
    expect(prepared.version?.target).toBe("/things/1");
    expect(prepared.refusal).toBeUndefined();
    expect(calls).toEqual(["coding preflight"]);
  });

  it("POST: no representation preflight before routing (the route's types decide it, in run())", () => {
    const { calls, steps } = recording();
    createPipeline(steps).prepare(request("POST"), "/things");
    expect(calls).toEqual(["coding preflight"]);
  });

  it("a version refusal → returned with the decision (its fields go on the refusal too), nothing else asked", () => {
    const { calls, steps } = recording();
    const refusal = HttpError.notFound("no such version");
    const prepared = createPipeline({ ...steps, versioning: versioning(refusal) }).prepare(
      request(),
      "/v9/x",
    );
    expect(prepared.refusal).toBe(refusal);
    expect(prepared.version?.fields["api-supported-versions"]).toBe("1, 2");
    expect(calls).toEqual([]);
  });

  it("a coding refusal → returned, not thrown", () => {
    const refusal = HttpError.notAcceptable("no coding fits");
    const pipeline = createPipeline({
      coding: {
        preflight: () => {
          throw refusal;
        },
        choose: () => "identity",
        encode: (_c, body) => body,
      },
    });
    expect(pipeline.prepare(request("POST"), "/x").refusal).toBe(refusal);
  });
});

describe("run(): the write's 406 decided by what the route produces", () => {
  const refusing = (seen: string[]): Representer => ({
    preflight: (_r, _label, changesState, produces) => {
      seen.push(
        `preflight ${changesState} ${produces === undefined ? "default" : `[${produces.join(",")}]`}`,
      );
      if (changesState && produces?.length !== 0)
        throw HttpError.notAcceptable("nothing the route answers fits");
    },
    represent: (_r, data) => ({
      contentType: "application/json",
      language: undefined,
      body: Buffer.from(JSON.stringify(data)),
      vary: ["Accept"],
    }),
    async *variants() {},
  });

  it.each([
    ["PATCH", undefined, "preflight true default", 406],
    ["PUT", { produces: ["application/json"] }, "preflight true [application/json]", 406],
    ["POST", { produces: ["text/csv"] }, "preflight true [text/csv]", 406],
    ["DELETE", { produces: [] }, "preflight true []", 204],
    ["GET", undefined, "preflight false default", 200],
  ] as const)(
    "%s, route %j → the representer asked %s before the handler → %s",
    async (method, route, asked, status) => {
      const seen: string[] = [];
      const events: string[] = [];
      const idempotency: Idempotency = {
        begin: async () => {
          events.push("begin");
          return undefined;
        },
      };
      const pipeline = createPipeline({ representations: refusing(seen) });
      const handler = () => {
        events.push("handler");
        return method === "DELETE" ? reply.empty() : { id: 1 };
      };
      const outcome = await pipeline.run(request(method), PREPARED, handler, { ...route, idempotency }).then(
        (value) => value.status,
        (err: HttpError) => err.status,
      );
      expect(seen).toEqual([asked]);
      expect(outcome).toBe(status);
      // A refusal comes before a key is claimed and before the handler's write.
      expect(events).toEqual(status === 406 ? [] : ["begin", "handler"]);
    },
  );
});

describe("run(): idempotent routes", () => {
  function keyed(replay?: ResponseValue) {
    const events: string[] = [];
    let recorded: ResponseValue | undefined;
    const claim: Claim = {
      complete: async (value) => {
        recorded = value;
        events.push(`complete ${value.status} ${text(value)}`);
      },
      release: async (err) => void events.push(`release ${(err as Error).message}`),
    };
    const idempotency: Idempotency = { begin: async () => (replay === undefined ? claim : { replay }) };
    const route: RouteOptions = { idempotency };
    return { events, route, recorded: () => recorded };
  }

  it("a claim → the handler runs once, the identity response is recorded, then coded for the client", async () => {
    const { steps } = recording();
    const { events, route } = keyed();
    let runs = 0;
    const value = await createPipeline(steps).run(
      request("POST"),
      PREPARED,
      (ctx) => {
        runs++;
        expect(ctx.claim).toBeDefined();
        return reply("made", { status: 201 });
      },
      route,
    );
    expect(runs).toBe(1);
    expect(events).toEqual(["complete 201 made"]);
    expect(text(value)).toBe("gzip:made");
  });

  it("a replay → the handler does not run; the recorded response is coded for this request", async () => {
    const { steps } = recording();
    const recorded: ResponseValue = {
      status: 201,
      fields: { "content-type": "text/plain", location: "/t/1" },
      vary: [],
      body: Buffer.from("made"),
    };
    const { route } = keyed(recorded);
    const value = await createPipeline(steps).run(
      request("POST"),
      PREPARED,
      () => {
        throw new Error("must not run");
      },
      route,
    );
    expect(value.status).toBe(201);
    expect(value.fields.location).toBe("/t/1");
    expect(text(value)).toBe("gzip:made");
    expect(recorded.body).toEqual(Buffer.from("made"));
  });

  it("the handler fails → the claim is released with its error, and the error goes on", async () => {
    const { route, events } = keyed();
    await expect(
      createPipeline().run(
        request("POST"),
        PREPARED,
        () => {
          throw new Error("db down");
        },
        route,
      ),
    ).rejects.toThrow("db down");
    expect(events).toEqual(["release db down"]);
  });
  it("the handler fails after the key's outcome committed → release answers the recorded response, coded; no error", async () => {
    const { steps } = recording();
    const recorded: ResponseValue = {
      status: 202,
      fields: { "content-type": "text/plain", location: "/t/9" },
      vary: [],
      body: Buffer.from("accepted"),
    };
    const released: unknown[] = [];
    const claim: Claim = {
      complete: async () => {
        throw new Error("not reached");
      },
      release: async (err) => {
        released.push(err);
        return { replay: recorded };
      },
    };
    const value = await createPipeline(steps).run(
      request("POST"),
      PREPARED,
      () => {
        throw new Error("read after the commit failed");
      },
      { idempotency: { begin: async () => claim } },
    );
    expect(released).toHaveLength(1);
    expect(value.status).toBe(202);
    expect(value.fields.location).toBe("/t/9");
    expect(text(value)).toBe("gzip:accepted");
  });
});

describe("checkWrite(): a write's preconditions on the current state", () => {
  it("the current data's representations, as the GET would make them; absent and not created → asked as absent", async () => {
    const { calls, steps } = recording();
    const pipeline = createPipeline(steps);
    await pipeline.checkWrite(request("PUT", { "if-match": '"t"' }), PREPARED, { data: "now" });
    await pipeline.checkWrite(request("DELETE", { "if-match": "*" }), PREPARED, undefined);
    await pipeline.checkWrite(request("PUT", { "if-none-match": "*" }), PREPARED, undefined, true);
    expect(calls).toEqual([
      "beforeWrite present false",
      "variants",
      "tag of text/plain; charset=utf-8",
      "beforeWrite absent false",
      "beforeWrite absent true",
    ]);
  });

  it("no validators step → nothing to check", async () => {
    await expect(
      createPipeline().checkWrite(request("PUT", { "if-match": '"x"' }), PREPARED, { data: 1 }),
    ).resolves.toBeUndefined();
  });
});

describe("createPipeline(options) refused at construction", () => {
  it.each([
    [{ validator: {} }, "ERR_SVC_KERNEL_UNKNOWN_OPTION", /did you mean "validators"/],
    [{ coding: { choose() {} } }, "ERR_SVC_KERNEL_CODING", /a step with preflight, choose, encode/],
    [{ representations: [] }, "ERR_SVC_KERNEL_REPRESENTATIONS", /a step with preflight, represent, variants/],
    [null, "ERR_SVC_KERNEL_OPTIONS", /an object of steps/],
  ])("%o → %s", (options, code, message) => {
    expect(() => createPipeline(options as PipelineOptions)).toThrow(
      expect.objectContaining({ name: "TypeError", code, message: expect.stringMatching(message) }),
    );
  });
});

describe("a representation's own fields", () => {
  it("Represented.fields (a PDF's Content-Disposition) → on the response of that representation only", async () => {
    const pdf: Representer = {
      preflight() {},
      represent: (r) => ({
        contentType: r.view.headers.accept === "application/pdf" ? "application/pdf" : "application/json",
        language: undefined,
        body: Buffer.from("x"),
        vary: ["Accept"],
        ...(r.view.headers.accept === "application/pdf"
          ? { fields: { "Content-Disposition": 'inline; filename="a.pdf"' } }
          : {}),
      }),
      async *variants() {},
    };
    const pipeline = createPipeline({ representations: pdf });
    const asPdf = await pipeline.respond(request("GET", { accept: "application/pdf" }), PREPARED, { a: 1 });
    expect(asPdf.fields["content-disposition"]).toBe('inline; filename="a.pdf"');
    const asJson = await pipeline.respond(request("GET", { accept: "application/json" }), PREPARED, { a: 1 });
    expect(asJson.fields["content-disposition"]).toBeUndefined();
  });
});
