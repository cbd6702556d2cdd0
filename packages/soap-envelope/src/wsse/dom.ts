// The DOM nodes this package reads, typed structurally: @xmldom/xmldom's own declarations pull in
// TypeScript's "dom" library, which would give every file of this package the browser's globals.

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
