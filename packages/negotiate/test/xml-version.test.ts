import { describe, expect, it } from "vitest";
import { parseXmlBody } from "../src/index.js";
import { useEchoServer } from "./echo-server.js";

/**
 * parseBody reads XML 1.0. XML 1.1 has other rules: NEL (U+0085) and LINE SEPARATOR (U+2028) are
 * line ends (XML 1.1 §2.11), character references to C0 controls are allowed (§2.2), and NEL or
 * LSEP inside the XML declaration is a fatal error. saxes switches to its 1.1 mode on the
 * declaration but accepts NEL and LSEP in the declaration, and reads any 1.x other than 1.0 as
 * 1.1; read as 1.0 instead, a 1.1 document's NEL line ends would silently become data. A
 * document declaring a version other than 1.0 is refused, by policy like a DOCTYPE (the media
 * type, RFC 7303, covers both versions), never parsed by rules the package does not document.
 */
const server = useEchoServer();

const post = async (xml: string) => {
  const res = await fetch(`${server.url}/echo`, {
    method: "POST",
    body: xml,
    headers: { "content-type": "application/xml" },
  });
  return { status: res.status, type: res.headers.get("content-type"), body: (await res.json()) as unknown };
};

const REFUSED = "XML body: only XML 1.0 is accepted; the XML declaration names another version";

describe("parseBody: an XML declaration naming a version other than 1.0 → 400", () => {
  it.each([
    ["1.1", '<?xml version="1.1"?><a>x</a>'],
    ["1.1 in single quotes, with encoding", "<?xml version='1.1' encoding='UTF-8'?><a>x</a>"],
    ["1.1 with NEL line ends (a line break in 1.1, data in 1.0)", '<?xml version="1.1"?><a>x\u0085y</a>'],
    ["1.1 with LINE SEPARATOR line ends", '<?xml version="1.1"?><a>x\u2028y</a>'],
    ["1.1 with a reference to a C0 control (1.1 only)", '<?xml version="1.1"?><a>&#x1;</a>'],
    ["1.1 with NEL inside the declaration (fatal in 1.1)", '<?xml version="1.1"\u0085encoding="UTF-8"?><a/>'],
    ["1.2", '<?xml version="1.2"?><a>x</a>'],
    ["1.10", '<?xml version="1.10"?><a>x</a>'],
  ])("version %s → 400, the handler never server.reached", async (_label, xml) => {
    const before = server.reached;
    const res = await post(xml);
    expect(res.status).toBe(400);
    expect(res.type).toMatch(/json/);
    expect(res.body).toMatchObject({ status: 400, message: REFUSED });
    expect(server.reached).toBe(before);
  });

  it.each([
    ["version 1.0", '<?xml version="1.0"?><a>x</a>'],
    [
      "version 1.0 with encoding and standalone",
      "<?xml version='1.0' encoding='utf-8' standalone='yes'?><a>x</a>",
    ],
    ["no XML declaration", "<a>x</a>"],
  ])("%s → parsed", async (_label, xml) => {
    const res = await post(xml);
    expect(res.status).toBe(201);
    expect(res.body).toEqual({ received: { a: "x" } });
  });

  it("XML 1.0 keeps NEL as a character of the text (XML 1.0 §2.11 has CR and LF only)", async () => {
    const res = await post('<?xml version="1.0"?><a>x\u0085y</a>');
    expect(res.status).toBe(201);
    expect(res.body).toEqual({ received: { a: "x\u0085y" } });
  });

  it.each([
    ["a version that is not 1.x", '<?xml version="2.0"?><a/>'],
    ["an empty version", '<?xml version=""?><a/>'],
  ])("%s → 400 Malformed, as before", async (_label, xml) => {
    const res = await post(xml);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({
      message: expect.stringMatching(/^Malformed XML body: not well-formed XML/),
    });
  });

  it("parseXmlBody itself refuses it with the same words", () => {
    expect(() => parseXmlBody('<?xml version="1.1"?><a/>')).toThrow(
      "only XML 1.0 is accepted; the XML declaration names another version",
    );
  });
});
