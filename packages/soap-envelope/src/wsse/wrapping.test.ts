import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ENV, post, readFault } from "../../test/helpers.js";
import {
  at,
  CA,
  security,
  signByHand,
  stamped,
  startSecuredService,
  timestamp,
  WSSE_NS,
  WSU_NS,
} from "../../test/wsse.js";

// XML Signature Wrapping (XSW): a message whose signature verifies, rearranged so that what the
// signature covers is not what the node processes. Each row starts from a message the service
// accepts and moves signed parts where the reference still finds them.
// @see https://www.w3.org/TR/xmldsig-bestpractices/#sec-SignatureWrapping

const WSA = "http://www.w3.org/2005/08/addressing";
const C = "http://svc.example.com/ws/customer/v1";
const request = (id: string) =>
  `<c:GetCustomerRequest xmlns:c="${C}"><c:customerId>${id}</c:customerId></c:GetCustomerRequest>`;
const SIGNED_BODY = new RegExp(`<soap:Body xmlns:wsu="${WSU_NS}" wsu:Id="Body-1">.*?</soap:Body>`);
const wrapper = (content: string) => `<x:Wrapper xmlns:x="urn:attacker">${content}</x:Wrapper>`;

let svc: Awaited<ReturnType<typeof startSecuredService>>;
beforeAll(async () => {
  svc = await startSecuredService(
    {
      signature: { trustedCertificates: [CA], signedParts: ["Body", "Timestamp", `{${WSA}}To`] },
      replay: false,
    },
    // wsa:To stands for any signed header block here (with a U+2028 no IRI holds, below): not
    // read as WS-Addressing, whose checks are test/addressing*.ts's.
    { logger: { error: () => {} }, addressing: false },
  );
});
afterAll(() => svc.close());

const signed = (extraHeader = "") =>
  signByHand(stamped("42", extraHeader), [{ uri: "#Body-1" }, { uri: "#TS-1" }]);

async function refused(body: string, code: string, reason: string) {
  const before = svc.seen.length;
  const res = await post(svc.endpoint, body);
  expect(res.status).toBe(400);
  const fault = readFault(res.text);
  expect(fault.code).toBe(`{${ENV}}Sender`);
  expect(fault.subcodes).toEqual([`{${WSSE_NS}}${code}`]);
  expect(fault.reason).toContain(reason);
  expect(svc.seen.length).toBe(before); // no handler ran
}

describe("signature wrapping refused", () => {
  it("the message unchanged → 200 (the rows below start from it)", async () => {
    expect((await post(svc.endpoint, signed())).status).toBe(200);
  });

  it("the signed Body moved into a header, an unsigned Body in its place → wsse:FailedCheck", () => {
    const message = signed();
    const body = (SIGNED_BODY.exec(message) as RegExpExecArray)[0];
    const attack = message
      .replace(body, `<soap:Body>${request("7")}</soap:Body>`)
      .replace("</soap:Header>", `${wrapper(body)}</soap:Header>`);
    return refused(attack, "FailedCheck", "the env:Body is not signed");
  });

  it("a second env:Body before the signed one → wsse:InvalidSecurity", () => {
    const message = signed();
    const body = (SIGNED_BODY.exec(message) as RegExpExecArray)[0];
    return refused(
      message.replace(body, `<soap:Body>${request("7")}</soap:Body>${body}`),
      "InvalidSecurity",
      "more than one env:Body",
    );
  });

  it("a second env:Body after the signed one → wsse:InvalidSecurity", () =>
    refused(
      signed().replace("</soap:Body>", `</soap:Body><soap:Body>${request("7")}</soap:Body>`),
      "InvalidSecurity",
      "more than one env:Body",
    ));

  it("a second element with the signed Body's wsu:Id (a signed copy in a header, the Body changed) → wsse:InvalidSecurity", () => {
    const message = signed();
    const body = (SIGNED_BODY.exec(message) as RegExpExecArray)[0];
    const attack = message
      .replace(body, body.replace(request("42"), request("7")))
      .replace("</soap:Header>", `${wrapper(body)}</soap:Header>`);
    return refused(attack, "InvalidSecurity", 'two elements have the Id "Body-1"');
  });

  it("the same Id as an unqualified Id on another element → wsse:InvalidSecurity", () =>
    refused(
      signed().replace("</soap:Header>", `${wrapper('<x:Decoy Id="Body-1"/>')}</soap:Header>`),
      "InvalidSecurity",
      'two elements have the Id "Body-1"',
    ));

  it("the signed Timestamp moved to a Security block for another role, a fresh unsigned one processed → wsse:FailedCheck", () => {
    const message = signed();
    const stamp = (/<wsu:Timestamp .*?<\/wsu:Timestamp>/.exec(message) as RegExpExecArray)[0];
    const attack = message
      .replace(stamp, timestamp(at(0), at(60_000), "TS-2"))
      .replace(
        "</soap:Header>",
        `${security(stamp, ` xmlns:e="${ENV}" e:role="urn:elsewhere"`)}</soap:Header>`,
      );
    return refused(attack, "FailedCheck", "the wsu:Timestamp is not signed");
  });

  it("a signed wsa:To wrapped away, an unsigned wsa:To the node processes → wsse:FailedCheck", () => {
    const to = `<wsa:To xmlns:wsa="${WSA}" xmlns:wsu="${WSU_NS}" wsu:Id="To-1">urn:customers</wsa:To>`;
    const message = signByHand(stamped("42", to), [{ uri: "#Body-1" }, { uri: "#TS-1" }, { uri: "#To-1" }]);
    const attack = message.replace(to, `${wrapper(to)}<wsa:To xmlns:wsa="${WSA}">urn:evil</wsa:To>`);
    return refused(attack, "FailedCheck", `the header block {${WSA}}To is not signed`);
  });

  it("…and the same message without the attack → 200, wsa:To in signature.headers", async () => {
    const to = `<wsa:To xmlns:wsa="${WSA}" xmlns:wsu="${WSU_NS}" wsu:Id="To-1">urn:customers</wsa:To>`;
    const message = signByHand(stamped("42", to), [{ uri: "#Body-1" }, { uri: "#TS-1" }, { uri: "#To-1" }]);
    expect((await post(svc.endpoint, message)).status).toBe(200);
    expect(svc.seen.at(-1)?.signature?.headers.map((h) => h.localName)).toEqual(["To"]);
  });

  const outside: [string, string][] = [
    ["another document (https://attacker.example/doc.xml#Body-1)", "https://attacker.example/doc.xml#Body-1"],
    ["an XPointer (#xpointer(/))", "#xpointer(/)"],
    ['the whole document (URI="")', ""],
    ["a MIME part (cid:body)", "cid:body"],
  ];
  it.each(outside)("a reference to %s → wsse:InvalidSecurity", (_name, uri) =>
    refused(
      signByHand(stamped(), [{ uri: "#Body-1" }, { uri: "#TS-1" }, { uri, digestOf: "Body-1" }]),
      "InvalidSecurity",
      "a ds:Reference URI must be #id, in this envelope",
    ),
  );

  it("a reference to the Envelope, which holds the signature → wsse:InvalidSecurity", () =>
    refused(
      signByHand(
        stamped().replace("<soap:Envelope ", `<soap:Envelope xmlns:wsu="${WSU_NS}" wsu:Id="Env-1" `),
        [{ uri: "#Body-1" }, { uri: "#TS-1" }, { uri: "#Env-1" }],
      ),
      "InvalidSecurity",
      "#Env-1 holds or is inside the ds:Signature",
    ));
});

// The signature is checked on the message up to its Header's end tag, then the rest is read: the
// places where that cut could go wrong still give the whole message's answer.
describe("the message read in two parts", () => {
  const accepted: [string, string][] = [
    [
      "a comment holding </soap:Header> in a header block",
      '<x:Note xmlns:x="urn:x"><!-- </soap:Header> --></x:Note>',
    ],
    [
      "a header block holding an x:Header of its own",
      '<x:Meta xmlns:x="urn:x"><x:Header>h</x:Header></x:Meta>',
    ],
  ];
  it.each(accepted)("%s → 200", async (_name, block) => {
    const message = signByHand(stamped("42", block), [{ uri: "#Body-1" }, { uri: "#TS-1" }]);
    expect((await post(svc.endpoint, message)).status).toBe(200);
  });

  it("an Envelope start tag with > in an attribute value → 200", async () => {
    const message = signByHand(
      stamped().replace("<soap:Envelope ", '<soap:Envelope xmlns:x="urn:x" x:note="a>b" '),
      [{ uri: "#Body-1" }, { uri: "#TS-1" }],
    );
    expect((await post(svc.endpoint, message)).status).toBe(200);
  });

  it("a second Body after the signed one → 400, no handler runs", async () => {
    const message = signed().replace(
      "</soap:Body></soap:Envelope>",
      `</soap:Body><soap:Body>${request("7")}</soap:Body></soap:Envelope>`,
    );
    const before = svc.seen.length;
    expect((await post(svc.endpoint, message)).status).toBe(400);
    expect(svc.seen.length).toBe(before);
  });
});

describe("line ends of XML 1.0", () => {
  it("a signed header block holding a literal U+2028 (a character in XML 1.0, not a line end) → 200", async () => {
    // Signed as `&#x2028;`, the same text in XML 1.0, then sent as the character itself.
    const to = `<wsa:To xmlns:wsa="${WSA}" xmlns:wsu="${WSU_NS}" wsu:Id="To-1">urn:customers&#x2028;</wsa:To>`;
    const message = signByHand(stamped("42", to), [{ uri: "#Body-1" }, { uri: "#TS-1" }, { uri: "#To-1" }]);
    expect(message).toContain("&#x2028;");
    expect((await post(svc.endpoint, message.replace("&#x2028;", "\u2028"))).status).toBe(200);
  });
});
