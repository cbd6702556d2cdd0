import { mainEntryFrameworkTies } from "@svc/test-utils";
import { describe, expect, it } from "vitest";
import * as main from "../src/index.js";

/** What the main entry exported before it was framework-free (`soapEndpoint`: now in `./express`). */
const MOVED = ["soapEndpoint", "soapErrorHandler"];

describe("@svc/soap-envelope: the main entry is framework-free", () => {
  it("src/index.ts and what it loads import no framework nor adapter entry, and read no Express app", () => {
    expect(mainEntryFrameworkTies(new URL("..", import.meta.url).pathname)).toEqual([]);
  });

  it.each(MOVED)("%s is not exported by the main entry", (name) => {
    expect(Object.keys(main)).not.toContain(name);
  });
});
