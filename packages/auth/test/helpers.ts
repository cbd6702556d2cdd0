import { generateKeyPairSync, type KeyObject } from "node:crypto";
import { errorHandler } from "@svc/errors/express";
import { requestState } from "@svc/kernel";
import { DOMParser, type Element } from "@xmldom/xmldom";
import express from "express";
import type { XmlElement } from "../src/soap.js";

/** An Express app that echoes `requestState(req).principal` behind the given middleware, with the error handler. */
export function app(...middleware: express.RequestHandler[]): express.Express {
  const a = express();
  a.get("/me", ...middleware, (req, res) => {
    res.json(requestState(req).principal ?? null);
  });
  a.post("/me", express.urlencoded({ extended: false }), ...middleware, (req, res) => {
    res.json(requestState(req).principal ?? null);
  });
  a.use(errorHandler({ logger: { error() {} } }));
  return a;
}

export function b64url(value: string | Buffer | object): string {
  const buf = Buffer.isBuffer(value)
    ? value
    : Buffer.from(typeof value === "string" ? value : JSON.stringify(value), "utf8");
  return buf.toString("base64url");
}

export function rsaPair(): { publicKey: KeyObject; privateKey: KeyObject } {
  return generateKeyPairSync("rsa", { modulusLength: 2048 });
}

/** Converts a DOM element into the structural shape the SOAP helpers take. */
export function toXmlElement(el: Element): XmlElement {
  const attributes: Record<string, string> = {};
  for (let i = 0; i < el.attributes.length; i++) {
    const attr = el.attributes.item(i);
    if (!attr || attr.name === "xmlns" || attr.prefix === "xmlns") continue;
    attributes[
      attr.namespaceURI ? `{${attr.namespaceURI}}${attr.localName}` : (attr.localName ?? attr.name)
    ] = attr.value;
  }
  const children: XmlElement[] = [];
  let text = "";
  for (let n = el.firstChild; n; n = n.nextSibling) {
    if (n.nodeType === 1) children.push(toXmlElement(n as Element));
    else if (n.nodeType === 3 || n.nodeType === 4) text += n.nodeValue ?? "";
  }
  return {
    namespace: el.namespaceURI ?? "",
    localName: el.localName ?? el.nodeName,
    attributes,
    children,
    text,
  };
}

/** The `Header` blocks of a SOAP 1.1/1.2 envelope. */
export function headerBlocks(xml: string): XmlElement[] {
  const doc = new DOMParser().parseFromString(xml, "text/xml");
  const envelope = doc.documentElement;
  if (!envelope) return [];
  const root = toXmlElement(envelope as unknown as Element);
  return root.children.find((c) => c.localName === "Header")?.children ?? [];
}
