import type { XmlCheckpoint } from "./checkpoint.js";
import { FastParse, finish, run } from "./fast-parse.js";
import type { ParsedElement, ResolvedXmlLimits, XmlParse } from "./model.js";
import { TEMPLATE_CHARS } from "./templates.js";

// A fast path for the documents SOAP clients send: an optional XML declaration and elements with
// ASCII names, quoted attributes and plain text, nothing else. It builds the same tree saxes
// would, and returns undefined as soon as the document holds anything beyond that subset
// (a comment, a CDATA section, an entity or character reference, a DOCTYPE, a processing
// instruction, a carriage return, a control or non-BMP character, a non-ASCII name, a broken tag,
// a limit reached): saxes then parses the whole document and decides, so every error and every
// refusal is still saxes' (XML 1.0 §2, Namespaces in XML 1.0 §3-§6). The subset is chosen so
// that everything it accepts is well-formed and namespace-well-formed.
//
// The parser is in xml/fast-parse.ts; a document whose markup repeats an earlier one's is built
// from that one's template (xml/templates.ts) without parsing.

/** XML 1.0 §2.8 XMLDecl with version 1.0, an EncName (§4.3.3) and SDDecl (§2.9), at offset 0. */
const XML_DECL =
  /^<\?xml[ \t\n]+version[ \t\n]*=[ \t\n]*(?:"1\.0"|'1\.0')(?:[ \t\n]+encoding[ \t\n]*=[ \t\n]*(?:"[A-Za-z][A-Za-z0-9._-]*"|'[A-Za-z][A-Za-z0-9._-]*'))?(?:[ \t\n]+standalone[ \t\n]*=[ \t\n]*(?:"(?:yes|no)"|'(?:yes|no)'))?[ \t\n]*\?>/;

/**
 * The declaration clients write most: a whole match of {@link XML_DECL} (the expression cannot
 * take in more after `?>`), recognised by comparison before the expression runs.
 */
const COMMON_DECL = '<?xml version="1.0" encoding="UTF-8"?>';

/** The parser of every document in turn; one that stopped at a checkpoint keeps its own. */
let PARSE = new FastParse();

/** The length of the XML declaration at offset 0, 0 when there is none, -1 when it is not one. */
function declarationLength(s: string): number {
  if (!s.startsWith("<?xml")) return 0;
  // A slice and a comparison cost less than startsWith over this many characters.
  if (s.slice(0, COMMON_DECL.length) === COMMON_DECL) return COMMON_DECL.length;
  const decl = XML_DECL.exec(s);
  return decl === null ? -1 : decl[0].length;
}

/**
 * The document's root element when the whole document lies in the plain subset described above,
 * else undefined (saxes parses it then).
 */
export function parseSimpleXml(
  s: string,
  limits: ResolvedXmlLimits,
  baseScope: Readonly<Record<string, string>>,
): ParsedElement | undefined {
  const declLength = declarationLength(s);
  if (declLength === -1) return undefined;
  const p = PARSE;
  p.reset(s, limits, baseScope);
  p.pos = declLength;
  return finish(p, run(p));
}

/**
 * {@link parseSimpleXml} asking `checkpoint` as the first levels open. A parse that stops keeps
 * its state (another document takes a fresh parser meanwhile) and resumes in `rest()`; when the
 * rest leaves the subset, `reparse()` (saxes over the whole document) gives the tree.
 */
export function parseSimpleXmlUntil(
  s: string,
  limits: ResolvedXmlLimits,
  baseScope: Readonly<Record<string, string>>,
  checkpoint: XmlCheckpoint,
  reparse: () => ParsedElement,
): XmlParse | undefined {
  const templates = checkpoint.templates;
  const templated = templates !== undefined && s.length <= TEMPLATE_CHARS && templates.attempt();
  if (templated) {
    const root = templates.replay(s, limits, baseScope);
    if (root !== undefined) return { root, rest: undefined };
  }
  const declLength = declarationLength(s);
  if (declLength === -1) return undefined;
  const p = PARSE;
  p.reset(s, limits, baseScope);
  p.checkpoint = checkpoint;
  p.mayStop = checkpoint.stops;
  p.pos = declLength;
  p.recording = templated;
  const ok = run(p);
  const held = p.held;
  if (!ok || !p.stopped) {
    if (ok) templates?.remember(p);
    const root = finish(p, ok);
    return root === undefined ? undefined : { root, rest: undefined, held };
  }
  PARSE = new FastParse();
  return {
    root: p.root as ParsedElement,
    held,
    rest: () => {
      p.mayStop = false;
      const ok = run(p);
      if (ok) templates?.remember(p);
      return finish(p, ok) ?? reparse();
    },
  };
}
