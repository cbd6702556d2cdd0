import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  ENV,
  envelope,
  getCustomer,
  post,
  readFault,
  startCustomerService,
  TNS,
} from "../../test/helpers.js";

// XML 1.0 §2.3: white space is #x20, #x9, #xD and #xA, nothing else. JavaScript's trim() and \s
// also take U+00A0, U+FEFF, U+2028, U+3000 and the other Unicode spaces, which are character data
// to XML: a value wrapped in them is not in an xs:long's lexical space (XML Schema Part 2 §4.3.6
// collapses only XML white space), and element-only content holding them is invalid.
const UNICODE_SPACES = ["\u00a0", "\ufeff", "\u2028", "\u3000"];
/** Forces the general parser (saxes): the fast path gives a comment up. */
const COMMENT = "<!-- general parser -->";
const SENDER = `{${ENV}}Sender`;

let svc: Awaited<ReturnType<typeof startCustomerService>>;
beforeAll(async () => {
  svc = await startCustomerService();
});
afterAll(() => svc.close());

describe("only XML white space is white space (XML 1.0 §2.3)", () => {
  it("control: XML white space around a value and between elements is accepted", async () => {
    for (const extra of ["", COMMENT]) {
      const body = `<c:GetCustomerRequest xmlns:c="${TNS}">\n\t<c:customerId> 42\r\n</c:customerId>\n${extra}</c:GetCustomerRequest>`;
      const res = await post(svc.endpoint, envelope(body));
      expect(res.status, res.text).toBe(200);
    }
  });

  for (const space of UNICODE_SPACES) {
    const name = `U+${space.charCodeAt(0).toString(16).toUpperCase().padStart(4, "0")}`;
    it(`${name} around an xs:long value → 400 Sender, on both parsers`, async () => {
      for (const extra of ["", COMMENT]) {
        const body = getCustomer(`${space}42${space}`).replace("</c:customerId>", `</c:customerId>${extra}`);
        const res = await post(svc.endpoint, envelope(body));
        expect(res.status, res.text).toBe(400);
        expect(readFault(res.text).code).toBe(SENDER);
      }
    });

    it(`${name} between the children of element-only content → 400 Sender, on both parsers`, async () => {
      for (const extra of ["", COMMENT]) {
        const body = `<c:GetCustomerRequest xmlns:c="${TNS}"><c:customerId>42</c:customerId>${extra}${space}</c:GetCustomerRequest>`;
        const res = await post(svc.endpoint, envelope(body));
        expect(res.status, res.text).toBe(400);
        expect(readFault(res.text).code).toBe(SENDER);
      }
    });

    it(`${name} as the only text of the Body → 400 Sender`, async () => {
      const res = await post(svc.endpoint, envelope(`${getCustomer("42")}${space}`));
      expect(res.status, res.text).toBe(400);
      expect(readFault(res.text).code).toBe(SENDER);
    });

    it(`env:mustUnderstand="${name}true" is not an xs:boolean → 400 Sender, not a MustUnderstand fault`, async () => {
      const header = `<x:Unknown xmlns:x="urn:x" xmlns:env="http://www.w3.org/2003/05/soap-envelope" env:mustUnderstand="${space}true"/>`;
      const res = await post(svc.endpoint, envelope(getCustomer("42"), header));
      expect(res.status, res.text).toBe(400);
      expect(readFault(res.text).code).toBe(SENDER);
    });
  }
});
