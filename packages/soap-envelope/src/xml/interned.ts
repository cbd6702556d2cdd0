/**
 * `text` as V8 keeps a property name: a string of its own (not a slice of the document it was
 * cut from, which a slice keeps alive) and the one copy of those characters among such names, the
 * package's string constants included. Comparing two of them, or looking one up as a key, then
 * reads no characters; a slice compared with a constant is read character by character each time.
 * For names and namespaces made once (a contract's, a template's), not per message.
 */
export function interned(text: string): string {
  return Object.keys({ [text]: 0 })[0] as string;
}
