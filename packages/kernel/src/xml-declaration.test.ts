import { describe, expect, it } from "vitest";
import { xmlDeclaredEncoding } from "./xml-declaration.js";

describe("xmlDeclaredEncoding (XML 1.0 §4.3.3 EncodingDecl)", () => {
  it.each([
    ['<?xml version="1.0" encoding="ISO-8859-1"?><a/>', "iso-8859-1"],
    ["<?xml version='1.0' encoding='UTF-16'?><a/>", "utf-16"],
    ['<?xml  version = "1.1"\n encoding = "Shift_JIS" standalone="yes"?>', "shift_jis"],
  ])("%s → %s", (text, name) => {
    expect(xmlDeclaredEncoding(text)).toBe(name);
  });

  it.each([
    ['<?xml version="1.0"?><a/>'],
    ["<a/>"],
    [' <?xml version="1.0" encoding="ISO-8859-1"?>'], // not at the start: no declaration
    ['<?xml encoding="ISO-8859-1" version="1.0"?>'], // version comes first (§2.8)
    ['<?xml version="1.0" encoding="8859"?>'], // EncName starts with a letter
  ])("%s → undefined", (text) => {
    expect(xmlDeclaredEncoding(text)).toBeUndefined();
  });

  it("reads the first 512 characters only", () => {
    const late = `<?xml version="1.0"${" ".repeat(600)} encoding="ISO-8859-1"?>`;
    expect(xmlDeclaredEncoding(late)).toBeUndefined();
  });
});
