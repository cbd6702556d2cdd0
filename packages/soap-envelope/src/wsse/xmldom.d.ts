// What this package uses of @xmldom/xmldom, typed here: the package's own declarations pull in
// TypeScript's "dom" library (`/// <reference lib="dom" />`), which would give every file of this
// package the browser's globals (its `fetch` and `BodyInit` in place of Node's). tsconfig's
// "paths" maps the module to this file, for xml-crypto's declarations too.

export interface Node {
  readonly nodeType: number;
  readonly parentNode: Node | null;
  readonly firstChild: Node | null;
  readonly nextSibling: Node | null;
  cloneNode(deep: boolean): Node;
}

export interface Attr {
  readonly prefix: string | null;
  readonly localName: string;
  readonly namespaceURI: string | null;
  readonly value: string;
}

export interface Element extends Node {
  readonly namespaceURI: string | null;
  readonly localName: string;
  readonly attributes: { readonly length: number; item(index: number): Attr | null };
  getAttribute(name: string): string | null;
}

export interface Document extends Node {
  readonly documentElement: Element | null;
}

export interface ErrorHandler {
  warning?: (message: string) => void;
  error?: (message: string) => void;
  fatalError?: (message: string) => void;
}

export class DOMParser {
  constructor(options?: {
    errorHandler?: ErrorHandler;
    /** Applied to the text before it is parsed (xmldom's default: XML 1.1's line ends). */
    normalizeLineEndings?: (text: string) => string;
  });
  parseFromString(text: string, mimeType: string): Document;
}
