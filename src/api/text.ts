// Text that users control (annotation values, ids on targets) on its way into Events, status and logs. Anyone with
// `edit` on a Service can write 256 KiB of annotations holding terminal escapes, invisible or direction-changing
// characters: what loopguard repeats of it is short, printable and says what it left out.

/** C0/C1 controls, and the invisible or direction-changing characters that can make a quote read as something else. */
// eslint-disable-next-line no-control-regex
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u200b-\u200f\u2028\u2029\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]/g;

/** Code units of the character at `i` (2 for a surrogate pair). */
function width(text: string, i: number): number {
  return (text.codePointAt(i) ?? 0) > 0xffff ? 2 : 1;
}

/** At most `max` characters (code points: never half a surrogate pair), ending in "..." when cut. */
export function clipText(text: string, max: number): string {
  if (text.length <= max) return text;
  let cut = 0;
  for (let i = 0, n = 0; i < text.length; i += width(text, i), n++) {
    if (n === max - 3) cut = i;
    if (n === max) return `${text.slice(0, cut)}...`;
  }
  return text;
}

function characters(text: string): number {
  let n = 0;
  for (let i = 0; i < text.length; i += width(text, i)) n++;
  return n;
}

/**
 * A user-supplied value quoted for a message: JSON string syntax, every unsafe character escaped as \uXXXX (so a
 * control character is visible instead of acting), at most `max` characters of the value, and its length when cut.
 */
export function quoteValue(raw: string, max = 80): string {
  const clipped = clipText(raw, max);
  const quoted = JSON.stringify(clipped).replace(UNSAFE, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  return clipped === raw ? quoted : `${quoted} (${characters(raw)} characters)`;
}

/** Text for an Event or a status field: unsafe characters become U+FFFD (they would garble terminals), at most `max` characters. */
export function printable(text: string, max: number): string {
  return clipText(text.replace(UNSAFE, '\ufffd'), max);
}
