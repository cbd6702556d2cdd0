import { describe, expect, it } from "vitest";
import { useEchoServer } from "./echo-server.js";

/**
 * XML 1.0 §2.10: `xml:space="preserve"` says the white space of an element is significant and
 * must be kept; it applies to the element's content and to every descendant, until an inner
 * `xml:space` says otherwise (`default` giving the application's own handling back). Here the
 * default handling trims the XML white space around mixed content; under `preserve` nothing is
 * trimmed.
 */
const server = useEchoServer();

const post = async (xml: string) => {
  const res = await fetch(`${server.url}/echo`, {
    method: "POST",
    body: xml,
    headers: { "content-type": "application/xml" },
  });
  return { status: res.status, body: (await res.json()) as { received?: unknown } };
};

describe('parseBody: xml:space="preserve" keeps white space (XML 1.0 §2.10)', () => {
  it.each<[string, string, unknown]>([
    [
      "on the element itself",
      '<code xml:space="preserve">  if (x)\n    y();\n</code>',
      { code: { "@xml:space": "preserve", "#text": "  if (x)\n    y();\n" } },
    ],
    [
      "white space only",
      '<pad xml:space="preserve">   </pad>',
      { pad: { "@xml:space": "preserve", "#text": "   " } },
    ],
    [
      "inherited by a descendant with attributes",
      '<doc xml:space="preserve"><line n="1">  indented</line></doc>',
      { doc: { "@xml:space": "preserve", line: { "@n": "1", "#text": "  indented" } } },
    ],
    [
      "inherited two levels down, mixed content",
      '<doc xml:space="preserve"><p><b>x</b> and <i>y</i> </p></doc>',
      { doc: { "@xml:space": "preserve", p: { b: "x", i: "y", "#text": " and  " } } },
    ],
    [
      "the indentation between children of a preserved element",
      '<doc xml:space="preserve">\n  <n>x</n>\n</doc>',
      { doc: { "@xml:space": "preserve", n: "x", "#text": "\n  \n" } },
    ],
    [
      'an inner xml:space="default" gives the trimming back',
      '<doc xml:space="preserve"><p xml:space="default">  x  </p><q a="1"> y </q></doc>',
      {
        doc: {
          "@xml:space": "preserve",
          p: { "@xml:space": "default", "#text": "x" },
          q: { "@a": "1", "#text": " y " },
        },
      },
    ],
    [
      'an inner "preserve" under "default"',
      '<doc xml:space="default"><p xml:space="preserve"> x </p><q a="1"> y </q></doc>',
      {
        doc: {
          "@xml:space": "default",
          p: { "@xml:space": "preserve", "#text": " x " },
          q: { "@a": "1", "#text": "y" },
        },
      },
    ],
    [
      "the scope ends with the element: a sibling after it is trimmed",
      '<doc><p xml:space="preserve"> x </p><q a="1"> y </q></doc>',
      { doc: { p: { "@xml:space": "preserve", "#text": " x " }, q: { "@a": "1", "#text": "y" } } },
    ],
  ])("%s", async (_label, xml, expected) => {
    const res = await post(xml);
    expect(res.status).toBe(201);
    expect(res.body).toEqual({ received: expected });
  });

  it.each<[string, string, unknown]>([
    ["no xml:space", '<q a="1">  y  </q>', { q: { "@a": "1", "#text": "y" } }],
    [
      'xml:space="default"',
      '<q xml:space="default">  y  </q>',
      { q: { "@xml:space": "default", "#text": "y" } },
    ],
    // Only the two values §2.10 defines mean anything; another leaves the inherited handling.
    [
      "a value §2.10 does not define",
      '<q xml:space="keep">  y  </q>',
      { q: { "@xml:space": "keep", "#text": "y" } },
    ],
    [
      '"Preserve" (values are case-sensitive)',
      '<q xml:space="Preserve">  y  </q>',
      { q: { "@xml:space": "Preserve", "#text": "y" } },
    ],
    [
      "space:preserve under another prefix is not xml:space",
      '<q xmlns:p="urn:p" p:space="preserve">  y  </q>',
      { q: { "@p:space": "preserve", "#text": "y" } },
    ],
  ])("%s → trimmed as before", async (_label, xml, expected) => {
    const res = await post(xml);
    expect(res.status).toBe(201);
    expect(res.body).toEqual({ received: expected });
  });

  it('a preserved xsi:nil element must still be empty: <v xml:space="preserve" xsi:nil="true"> </v> → 400', async () => {
    const res = await post(
      '<r xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xml:space="preserve"><v xsi:nil="true"> </v></r>',
    );
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ status: 400, message: expect.stringMatching(/^Invalid XML body: /) });
  });
});
