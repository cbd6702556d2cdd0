import { HttpError, MEDIA_TYPE, type PipelineRequest, type Representer, reply } from "@svc/kernel";
import { describe, expect, it } from "vitest";
import { csv, json, type Representation, text, xml } from "./representation.js";
import { choiceCacheSize, representations } from "./representer.js";

// Pages only: the offer that narrows what it can represent, so the choice depends on the data.
const pageCsv: Representation = {
  mediaType: "text/csv",
  canRepresent: (data) => Array.isArray((data as { items?: unknown } | null)?.items),
  serialize: (data, context) => csv.serialize((data as { items: unknown[] }).items, context),
};
const offers = [json, xml, pageCsv, text];

function request(accept: string | undefined): PipelineRequest {
  return { view: { method: "GET", headers: accept === undefined ? {} : { accept } }, path: "/x" };
}

/** The Content-Type `step` answers with, or the status of its refusal. */
async function answer(
  step: Representer,
  accept: string | undefined,
  data: unknown,
  label?: string,
  fallback = false,
): Promise<string | number> {
  try {
    return (await step.represent(request(accept), data, { label, fallback, reply: reply(data) })).contentType;
  } catch (err) {
    if (err instanceof HttpError) return err.status;
    throw err;
  }
}

const accepts = [
  undefined,
  "*/*",
  "application/json",
  "application/xml",
  "text/csv",
  "text/csv, application/json;q=0.1",
  "application/hal+json",
  "application/hal+json, application/json;q=0.9",
  "application/json, application/hal+json;q=0.5",
  "application/vnd.x.v2+json",
  "application/vnd.x.v2+xml, application/xml;q=0.5",
  "text/*;q=0.8, */*;q=0.1",
  "image/png",
];
const bodies = [
  { id: 1 },
  { items: [{ id: 1 }, { id: 2 }] },
  { id: 2, [MEDIA_TYPE]: "application/hal+json" },
  { items: [{ id: 3 }], [MEDIA_TYPE]: "application/hal+json" },
];
const labels = [undefined, "application/vnd.x.v2+json", "application/vnd.x.v3+json"];
const cases = accepts.flatMap((accept) =>
  bodies.flatMap((data) =>
    labels.flatMap((label) => [false, true].map((fallback) => ({ accept, data, label, fallback }))),
  ),
);

// The choice is remembered per shape (the offers that can represent the data, and its label or the
// type the data names for itself) and Accept value: a response of another shape never gets it.
describe("representations(): the choice among the offers, remembered", () => {
  it(`${cases.length} cases in three orders on one representer → each the answer of a new representer`, async () => {
    const expected = await Promise.all(
      cases.map((c) => answer(representations({ offers }), c.accept, c.data, c.label, c.fallback)),
    );
    const step = representations({ offers });
    const wrong: string[] = [];
    for (const order of [
      cases.keys(),
      [...cases.keys()].reverse(),
      [...cases.keys()].sort((a, b) => ((a * 7919) % 211) - ((b * 7919) % 211)),
    ]) {
      for (const i of order) {
        const c = cases[i] as (typeof cases)[number];
        const got = await answer(step, c.accept, c.data, c.label, c.fallback);
        if (got !== expected[i]) wrong.push(`${JSON.stringify(c)}: ${got} ≠ ${expected[i]}`);
      }
    }
    expect(wrong).toEqual([]);
    // Not a vacuous table: pages and other data, labels and hints answer differently.
    expect(new Set(expected).size).toBeGreaterThan(6);
  });

  it("text/csv for a page, then for a single item, then for a page → csv, 406, csv", async () => {
    const step = representations({ offers });
    const page = { items: [{ id: 1 }] };
    expect(await answer(step, "text/csv", page)).toBe("text/csv; charset=utf-8");
    expect(await answer(step, "text/csv", { id: 1 })).toBe(406);
    expect(await answer(step, "text/csv", page)).toBe("text/csv; charset=utf-8");
  });

  it("2,000 distinct Accept values → each answered, at most 64 held", async () => {
    const step = representations({ offers });
    let wrong = 0;
    let most = 0;
    for (let i = 0; i < 2_000; i++) {
      const accept = i % 2 === 0 ? `application/xml, text/x-${i};q=0.5` : `text/plain;q=0.9, image/x-${i}`;
      const expected = i % 2 === 0 ? "application/xml; charset=utf-8" : "text/plain; charset=utf-8";
      if ((await answer(step, accept, { id: i })) !== expected) wrong++;
      most = Math.max(most, choiceCacheSize(step).accepts);
    }
    expect({ wrong, most }).toEqual({ wrong: 0, most: 64 });
  });

  it("2,000 distinct labels → each answered, at most 16 shapes of at most 64 values held", async () => {
    const step = representations({ offers });
    let wrong = 0;
    let most = { shapes: 0, accepts: 0 };
    for (let i = 0; i < 2_000; i++) {
      const label = `application/vnd.x.v${i}+json`;
      if (
        (await answer(step, `${label}, application/xml;q=0.${(i % 9) + 1}`, { id: i }, label)) !==
        `${label}; charset=utf-8`
      )
        wrong++;
      const held = choiceCacheSize(step);
      most = { shapes: Math.max(most.shapes, held.shapes), accepts: Math.max(most.accepts, held.accepts) };
    }
    expect(wrong).toBe(0);
    expect(most.shapes).toBe(16);
    expect(most.accepts).toBeLessThanOrEqual(16 * 64);
  });

  it("a label or an Accept value longer than 256 characters → answered, not held", async () => {
    const step = representations({ offers });
    await answer(step, "application/json", { id: 1 });
    const before = choiceCacheSize(step);
    const label = `application/vnd.${"a".repeat(300)}+json`;
    expect(await answer(step, label, { id: 1 }, label)).toBe(`${label}; charset=utf-8`);
    const accept = `application/xml, ${"text/x-long;q=0.1, ".repeat(20)}`;
    expect(await answer(step, accept, { id: 1 })).toBe("application/xml; charset=utf-8");
    expect(choiceCacheSize(step)).toEqual(before);
  });
});
