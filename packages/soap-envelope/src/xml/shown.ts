import { shown as shownIn } from "@svc/kernel/internal";

export { cutCharacters } from "@svc/kernel/internal";

/** Characters of a name or value from the message that an error message or fault Reason shows. */
export const SHOWN_LENGTH = 100;

/**
 * `text`, from the message, as an error message or fault Reason shows it: its first `max`
 * characters, counted in code points, so a surrogate pair is never cut (a lone surrogate is no
 * XML Char, XML 1.0 §2.2), with `…` when cut. Names and values are bounded only by
 * `limits.maxBytes`, and a Reason that echoed one whole would be as large as the message.
 */
export function shown(text: string, max = SHOWN_LENGTH): string {
  return shownIn(text, max);
}
