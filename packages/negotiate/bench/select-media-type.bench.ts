// Cost of one media-type decision with @svc/negotiate against negotiator (what Express's
// res.format and `accepts` use), on Accept headers real clients send. Pure CPU, no server.
// Run: npx vitest bench --run --project @svc/negotiate
import Negotiator from "negotiator";
import { bench, describe } from "vitest";
import { selectMediaType } from "../src/index.js";

const offers = ["application/json", "application/xml", "text/csv", "text/plain", "text/html"];
const headers = [
  // Firefox / Chrome navigation
  "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8",
  "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,image/apng,*/*;q=0.8,application/signed-exchange;v=b3;q=0.7",
  // curl, fetch, axios
  "*/*",
  "application/json, text/plain, */*",
  // API clients
  "application/json",
  "application/xml;q=0.9, application/json",
  "text/csv",
];

describe("selectMediaType: realistic Accept headers (7 headers per iteration)", () => {
  bench("@svc/negotiate selectMediaType", () => {
    for (const accept of headers) selectMediaType(accept, offers);
  });
  bench("negotiator mediaType", () => {
    for (const accept of headers) new Negotiator({ headers: { accept } }).mediaType(offers);
  });
});

// Every header distinct and more numerous than the parse cache: the uncached parse path.
const distinct = Array.from(
  { length: 2000 },
  (_, i) =>
    `application/xml;q=0.${(i % 999) + 1}, application/json;q=0.${((i * 7) % 999) + 1}, */*;q=0.0${i % 10}${i % 7}`,
);
let n = 0;

describe("selectMediaType: distinct headers (parse cache defeated)", () => {
  bench("@svc/negotiate selectMediaType", () => {
    selectMediaType(distinct[n++ % distinct.length], offers);
  });
  bench("negotiator mediaType", () => {
    new Negotiator({ headers: { accept: distinct[n++ % distinct.length] } }).mediaType(offers);
  });
});
