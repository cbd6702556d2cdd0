// What this package uses of @xmldom/xmldom, typed here: the package's own declarations pull in
// TypeScript's "dom" library (`/// <reference lib="dom" />`), which would give every file of this
// package the browser's globals (its `fetch` and `BodyInit` in place of Node's). tsconfig's
// "paths" maps the module to this file, for xml-crypto's declarations too. The nodes are
// src/wsse/dom.ts's, which the sources import, so they compile without that path too.

import type { Document } from "./dom.js";

export type { Attr, Document, Element, Node } from "./dom.js";

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
