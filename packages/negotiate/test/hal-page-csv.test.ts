import { hal, isPage, pageItems, pageModel } from "@svc/hal";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { csv, json, type Representation, representations } from "../src/index.js";
import { onExpress } from "./core.js";

/** @svc/hal's README recipe for a page as CSV, with items built by `hal(...)` and plain ones. */
describe("a page as CSV (the @svc/hal README recipe)", () => {
  let server: Awaited<ReturnType<typeof onExpress>>;
  beforeAll(async () => {
    // The recipe, as the README writes it.
    const pageCsv: Representation = {
      mediaType: "text/csv",
      canRepresent: isPage,
      serialize: (d, c) => csv.serialize(pageItems(d), c),
    };
    const page = (items: object[]) =>
      pageModel({
        collection: "employees",
        items,
        page: 1,
        size: 20,
        totalElements: items.length,
        url: "/employees",
      });
    server = await onExpress(
      { representations: representations({ offers: [json, pageCsv] }) },
      {
        "/hal": () =>
          page([
            hal({ id: 7, name: "Ada" }).link("self", "/employees/7"),
            hal({ id: 8, name: "Grace" }).link("self", "/employees/8").link("manager", "/employees/7"),
          ]),
        "/plain": () => page([{ id: 7, name: "Ada", _links: { self: { href: "/employees/7" } } }]),
      },
    );
  });
  afterAll(() => server.close());

  it.each([
    ["/hal", "id,name\n7,Ada\n8,Grace\n"],
    ["/plain", "id,name\n7,Ada\n"],
  ])("GET %s, Accept: text/csv → one row per item with its data, no links", async (path, expected) => {
    const res = await fetch(`${server.url}${path}`, { headers: { accept: "text/csv" } });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/csv; charset=utf-8");
    expect((await res.text()).replace(/\r\n/g, "\n")).toBe(expected);
  });
});
