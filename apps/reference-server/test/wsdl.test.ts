import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { loadContract } from "@svc/soap-envelope";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Started, sqlite } from "./harness.js";

/**
 * What the contracts tell a client generated from them (spec part 5 rule 5): the Authentication
 * header block, declared for every operation's input, and the WS-SecurityPolicy UsernameToken
 * attached to the binding. And how they are served: a strong ETag, revalidated with 304.
 */
const CONTRACTS = join(import.meta.dirname, "..", "contracts");
const SCHEMAS = join(CONTRACTS, "schemas");
const WSP = "http://www.w3.org/ns/ws-policy";
const SP = "http://docs.oasis-open.org/ws-sx/ws-securitypolicy/200702";
const WSU = "http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-wssecurity-utility-1.0.xsd";

const contracts = [
  { wsdl: "customer.wsdl", xsd: "customer.xsd", tns: "http://svc.example.com/ws/customer/v1" },
  { wsdl: "price.wsdl", xsd: "price.xsd", tns: "http://svc.example.com/ws/price/v1" },
];

describe("the contracts declare how to authenticate", () => {
  for (const c of contracts) {
    it(`${c.wsdl}: every operation's input declares the {tns}Authentication header block`, () => {
      const contract = loadContract(join(CONTRACTS, c.wsdl));
      expect(contract.operations.length).toBeGreaterThan(0);
      for (const op of contract.operations) expect(op.headers).toEqual([`{${c.tns}}Authentication`]);
      expect(contract.schema.hasElement(`{${c.tns}}Authentication`)).toBe(true);
    });
    it(`${c.wsdl}: the binding's wsp:PolicyReference names the UsernameToken policy by its wsu:Id`, () => {
      const text = readFileSync(join(CONTRACTS, c.wsdl), "utf8");
      expect(text).toContain(`xmlns:wsp="${WSP}"`);
      expect(text).toContain(`xmlns:sp="${SP}"`);
      expect(text).toContain(`xmlns:wsu="${WSU}"`);
      const ref = /<wsdl:binding\b[\s\S]*?<wsp:PolicyReference URI="#([^"]+)"\/>/.exec(text)?.[1];
      expect(ref).toBe("UsernameTokenPolicy");
      const policy = new RegExp(`<wsp:Policy wsu:Id="${ref}">([\\s\\S]*?)\\n  </wsp:Policy>`).exec(text)?.[1];
      expect(policy).toMatch(/<sp:SupportingTokens wsp:Optional="true">[\s\S]*<sp:UsernameToken\b/);
      // Both ways the server takes the password: as text, and as a digest (sp:HashPassword).
      expect(policy).toMatch(/<wsp:All>\s*<sp:WssUsernameToken10\/>\s*<\/wsp:All>/);
      expect(policy).toMatch(/<wsp:All>\s*<sp:HashPassword\/>\s*<sp:WssUsernameToken10\/>\s*<\/wsp:All>/);
    });
  }
});

const xmllint = (() => {
  try {
    execFileSync("xmllint", ["--version"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
})();
if (!xmllint && !process.env.CI)
  console.warn("[skip] xmllint is not installed (Debian: libxml2-utils): contract validation skipped");

/** xmllint's verdict on `text` against `schema`: "" when valid, its complaint otherwise. */
function lint(schema: string, text: string): string {
  try {
    execFileSync("xmllint", ["--noout", "--schema", schema, "-"], {
      input: text,
      encoding: "utf8",
      stdio: ["pipe", "pipe", "pipe"],
    });
    return "";
  } catch (err) {
    return String((err as { stderr?: string }).stderr ?? err);
  }
}

describe.skipIf(!xmllint && !process.env.CI)("the credentials declarations validate with xmllint", () => {
  const customer = readFileSync(join(CONTRACTS, "customer.wsdl"), "utf8");
  const wsdlSchema = join(SCHEMAS, "wsdl11.xsd");

  it("customer.wsdl as written → valid (the schemas see the policy and the header)", () => {
    expect(lint(wsdlSchema, customer)).toBe("");
  });
  // Each a mistake the schemas must catch, so the test above cannot pass vacuously.
  const broken: [string, string, string][] = [
    ["soap12:header use=encoded", 'part="parameters" use="literal"/>', 'part="parameters" use="encoded"/>'],
    ["soap12:header without part", ' part="parameters" use="literal"/>', ' use="literal"/>'],
    ["a misspelt sp:IncludeToken", "IncludeToken/AlwaysToRecipient", "IncludeToken/AlwaysToTheRecipient"],
    ["wsp:Optional that is not a boolean", 'wsp:Optional="true"', 'wsp:Optional="maybe"'],
    [
      "a wsp:PolicyReference without URI",
      '<wsp:PolicyReference URI="#UsernameTokenPolicy"/>',
      "<wsp:PolicyReference/>",
    ],
    ["an unknown assertion", "<sp:HashPassword/>", "<sp:HashedPassword/>"],
    [
      "the policy after wsdl:types (WSDL 1.1 puts extension elements first)",
      "</wsdl:types>",
      "</wsdl:types><wsp:Policy/>",
    ],
  ];
  it.each(broken)("customer.wsdl with %s → invalid", (_name, from, to) => {
    expect(customer).toContain(from);
    expect(lint(wsdlSchema, customer.replace(from, to))).not.toBe("");
  });

  for (const c of contracts) {
    const block = (user: string, password: string) =>
      `<a:Authentication xmlns:a="${c.tns}"><a:Username>${user}</a:Username><a:Password>${password}</a:Password></a:Authentication>`;
    it(`an Authentication header block → valid against ${c.xsd}`, () => {
      expect(lint(join(CONTRACTS, c.xsd), block("admin", "admin"))).toBe("");
    });
    it(`an Authentication block without Password, or with an empty Username → invalid against ${c.xsd}`, () => {
      expect(
        lint(join(CONTRACTS, c.xsd), block("admin", "").replace(/<a:Password>.*<\/a:Password>/, "")),
      ).not.toBe("");
      expect(lint(join(CONTRACTS, c.xsd), block("", "admin"))).not.toBe("");
    });
  }
});

describe("?wsdl and ?xsd= through the reference server (RFC 9110 §13.1)", () => {
  let s: Started;
  beforeAll(async () => {
    s = await sqlite.start();
  });
  afterAll(() => s.stop());

  // Identity, a strong tag; gzip (coded by the endpoints' compression()), the weak one (§8.8.3).
  const codings = [
    ["identity", /^"[^"]+"$/],
    ["gzip", /^W\/"[^"]+"$/],
  ] as const;
  for (const path of ["/ws/customer?wsdl", "/ws/customer?xsd=customer.xsd", "/ws/PriceService?wsdl"]) {
    it.each(codings)(
      `GET ${path}, Accept-Encoding: %s → its ETag; If-None-Match: <tag> and * → 304; If-Match: "stale" → 412 fault`,
      async (coding, form) => {
        const headers = { "accept-encoding": coding };
        const first = await fetch(`${s.url}${path}`, { headers });
        expect(first.status).toBe(200);
        expect(first.headers.get("content-encoding")).toBe(coding === "identity" ? null : coding);
        expect(await first.text()).toContain("Authentication");
        const etag = first.headers.get("etag") ?? "";
        expect(etag).toMatch(form);
        expect(first.headers.get("cache-control")).toBe("no-cache");
        for (const tag of [etag, "*"]) {
          const again = await fetch(`${s.url}${path}`, { headers: { ...headers, "if-none-match": tag } });
          expect(again.status).toBe(304);
          expect(again.headers.get("etag")).toBe(etag);
          expect(again.headers.get("cache-control")).toBe("no-cache");
        }
        const stale = await fetch(`${s.url}${path}`, { headers: { ...headers, "if-match": '"stale"' } });
        expect(stale.status).toBe(412);
        expect(stale.headers.get("etag")).toBe(etag);
        expect(stale.headers.get("content-type")).toMatch(/^application\/soap\+xml/);
        expect(await stale.text()).toContain("env:Sender");
      },
    );
  }
});
