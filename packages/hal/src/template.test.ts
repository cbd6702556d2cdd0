import { at, listen } from "@svc/test-utils";
import express from "express";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { halJson } from "./hal-json.js";
import { expandLink, expandTemplate, toHalLink } from "./link.js";
import { hal } from "./resource.js";

// RFC 6570 §2: templates the application writes into templated links. Every one is well formed:
// it goes out as written.
const WELL_FORMED = [
  "/orders{?q,page,size}",
  "/no-expressions",
  "{+base}/x",
  "/s{/path*}{?q,tags*}{#frag}",
  "/{x:1}{.ext}{;keys*}{&more}",
  "/{x:9999}",
  "/{x.y}{_a_.b9}{%41b.%7E}",
  "http://[::1]:8080/a{?q}",
];

// Malformed: §2.1 braces, §2.2 operators (reserved ones included), §2.3 varnames, §2.4 modifiers
// (§2.4.1 max-length is a positive integer below 10000; a varspec has one modifier at most).
const MALFORMED = [
  "/a{x",
  "/a}x",
  "/a{x}}",
  "/a{{x}}",
  "/a{}",
  "/a{?}",
  "/a{x,}",
  "/a{,x}",
  "/a{=x}",
  "/a{!x}",
  "/a{@x}",
  "/a{|x}",
  "/a{$x}",
  "/a{(x)}",
  "/a{x-y}",
  "/a{x y}",
  "/a{x.}",
  "/a{.x..y}",
  "/a{%4}",
  "/a{%zz}",
  "/a{x:0}",
  "/a{x:10000}",
  "/a{x:03}",
  "/a{x:}",
  "/a{x:-1}",
  "/a{x:1.5}",
  "/a{x*:3}",
  "/a{x:3*}",
  "/a{x**}",
];

describe("templated links the application writes, through a real server (RFC 6570 §2)", () => {
  let url: string;
  let close: () => Promise<void>;
  beforeAll(async () => {
    const app = express();
    // The template is the application's: a route per row, its number in the path.
    const send =
      (build: (template: string) => unknown) =>
      (req: express.Request, res: express.Response): void => {
        const list = req.params.list === "good" ? WELL_FORMED : MALFORMED;
        const template = list[Number(req.params.i)] as string;
        try {
          res.type(halJson.mediaType).send(halJson.serialize(build(template)));
        } catch (err) {
          res.status(500).json({ name: (err as Error).name, code: (err as { code?: string }).code });
        }
      };
    app.get(
      "/link/:list/:i",
      send((href) => hal({}).link("search", { href, templated: true })),
    );
    app.get(
      "/curie/:list/:i",
      send((href) => hal({}).curie("acme", `${href}{rel}`)),
    );
    app.get(
      "/expand/:list/:i",
      send((href) => ({ href: expandTemplate(href, { q: "a", x: "b" }) })),
    );
    app.get(
      "/expand-link/:list/:i",
      send((href) => expandLink({ href, templated: true }, { q: "a" })),
    );
    ({ url, close } = await listen(app));
  });
  afterAll(async () => close());

  it.each(WELL_FORMED.map((t, i) => [t, i] as const))(
    "well formed %s → sent as written",
    async (template, i) => {
      const link = await fetch(`${url}/link/good/${i}`);
      expect(link.status).toBe(200);
      expect(at(await link.json(), "_links", "search")).toEqual({ href: template, templated: true });
      const curie = await fetch(`${url}/curie/good/${i}`);
      expect(curie.status).toBe(200);
      expect(at(await curie.json(), "_links", "curies")).toEqual([
        { href: `${template}{rel}`, templated: true, name: "acme" },
      ]);
      expect((await fetch(`${url}/expand/good/${i}`)).status).toBe(200);
      expect((await fetch(`${url}/expand-link/good/${i}`)).status).toBe(200);
    },
  );

  it.each(MALFORMED.map((t, i) => [t, i] as const))(
    "malformed %s → TypeError ERR_SVC_HAL_TEMPLATE where the application gives it, never sent",
    async (template, i) => {
      for (const route of ["link", "curie", "expand", "expand-link"]) {
        const res = await fetch(`${url}/${route}/bad/${i}`);
        expect({ route, status: res.status, body: await res.json() }).toEqual({
          route,
          status: 500,
          body: { name: "TypeError", code: "ERR_SVC_HAL_TEMPLATE" },
        });
      }
      expect(() => toHalLink({ href: template, templated: true })).toThrow(/RFC 6570/);
      // Not templated: an href like any other, no template to check.
      expect(toHalLink({ href: template })).toEqual({ href: template });
    },
  );
});
