import { describe, expect, it } from "vitest";
import { multipart, rootPart, XOP_NS } from "../../test/mtom.js";
import { resolveLimits, XmlError } from "../xml/reader.js";
import { resolveMtom } from "./options.js";
import { readXopPackage } from "./xop.js";

// The root part as XOP 1.0 §3.2 reconstructs it: each xop:Include element of its infoset, and
// nothing else, replaced by the base64 of the part it names.

const B = "xop-boundary";
const ATTACHMENT = "QUJD"; // base64 of the part's octets, "ABC"
const limits = resolveLimits();
const bounds = resolveMtom(undefined, limits.maxBytes) as NonNullable<ReturnType<typeof resolveMtom>>;
const xop = ` xmlns:xop="${XOP_NS}"`;
const include = (declare = xop, cid = "a@example") => `<xop:Include${declare} href="cid:${cid}"/>`;

async function reconstruct(xml: string): Promise<string> {
  const body = multipart(B, [
    rootPart("1.2", xml),
    { headers: { "Content-ID": "<a@example>", "Content-Type": "application/octet-stream" }, body: "ABC" },
  ]);
  const message = await readXopPackage(
    new Uint8Array(body),
    { boundary: B, start: "<root@example>" },
    limits,
    bounds,
    1000,
  );
  return message.text;
}

const rows: [string, string, string][] = [
  ["an xop:Include, its prefix declared on it", `<r>${include()}</r>`, `<r>${ATTACHMENT}</r>`],
  [
    "an xop:Include, its prefix declared on the document element",
    `<r${xop}><c>${include("")}</c></r>`,
    `<r${xop}><c>${ATTACHMENT}</c></r>`,
  ],
  [
    "an Include in the XOP namespace its parent makes the default",
    `<c xmlns="${XOP_NS}"><Include href="cid:a@example"/></c>`,
    `<c xmlns="${XOP_NS}">${ATTACHMENT}</c>`,
  ],
  [
    "an xop:Include with an end tag, space and an extension element (XOP 1.0 §2.1)",
    `<r>a<xop:Include${xop} href="cid:a@example" >\r\n <e:x xmlns:e="urn:e"/> </xop:Include>b</r>`,
    `<r>a${ATTACHMENT}b</r>`,
  ],
  [
    "an xop:Include after CR LF line ends and a character outside the BMP",
    `<r>\r\n😀\r\n${include()}</r>`,
    `<r>\r\n😀\r\n${ATTACHMENT}</r>`,
  ],
  [
    "an xop:Include look-alike in a CDATA section",
    `<r${xop}><n><![CDATA[${include("")}]]></n><c>${include("")}</c></r>`,
    `<r${xop}><n><![CDATA[${include("")}]]></n><c>${ATTACHMENT}</c></r>`,
  ],
  [
    "an xop:Include look-alike in a comment, naming no part",
    `<r><!-- ${include(xop, "gone@example")} --></r>`,
    `<r><!-- ${include(xop, "gone@example")} --></r>`,
  ],
  [
    "a comment naming the XOP namespace, an Include whose prefix is bound to another",
    `<r><!--${xop} -->${include(' xmlns:xop="urn:example:other"')}</r>`,
    `<r><!--${xop} -->${include(' xmlns:xop="urn:example:other"')}</r>`,
  ],
  [
    "an Include of another namespace, its prefix bound to XOP on a sibling",
    `<r><n${xop}/>${include(' xmlns:xop="urn:example:other"')}</r>`,
    `<r><n${xop}/>${include(' xmlns:xop="urn:example:other"')}</r>`,
  ],
  [
    "an xop:Include look-alike in an attribute value",
    `<r n='&lt;xop:Include${xop} href="cid:a@example"/>'/>`,
    `<r n='&lt;xop:Include${xop} href="cid:a@example"/>'/>`,
  ],
];

describe("readXopPackage: the xop:Include elements replaced", () => {
  it.each(rows)("%s", async (_name, xml, expected) => {
    expect(await reconstruct(xml)).toBe(expected);
  });

  it("a root part that is not well-formed XML → the XmlError its parse gives", async () => {
    await expect(reconstruct(`<r>${include()}`)).rejects.toBeInstanceOf(XmlError);
  });
});
