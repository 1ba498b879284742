import { invalidArgument } from "../domain/errors.js";

/**
 * How far a request's JSON may nest and spread before it is parsed. No request message comes near these (the deepest,
 * a bulk import's user, nests about seven levels; the widest object is a message with a few dozen fields; the longest
 * list, a bulk import's users, holds at most 1 000), and a body past them is refused before JSON.parse sees it.
 *
 * The values of the whole body (members and items, containers included) are bounded too: a bulk import's thousand users
 * hold about 20 000, and without a total, lists of small containers, each within the limits, took JSON.parse about a
 * second for 4 MiB.
 *
 * Why: JSON.parse's time depends on a body's shape, not only its size. Within the 4 MiB a request may take (4 KiB
 * gzipped), two million nested brackets took JSON.parse 2.2 s of the event loop, and an object of 400 000 keys 0.66 s.
 */
export const JSON_LIMITS = { depth: 32, objectMembers: 256, listItems: 10_000, values: 100_000 };

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_LIST = 0x5b;
const CLOSE_LIST = 0x5d;
const COMMA = 0x2c;

/**
 * Throws invalid_argument `request.malformed` when `text` nests deeper, or holds a wider object or a longer list,
 * than JSON_LIMITS. One pass over the characters, strings skipped whole; it judges nothing else (what is not JSON is
 * JSON.parse's to refuse, after this), so on text that is not JSON it may count loosely, never for long.
 */
export function rejectOversizedJson(text: string, limits = JSON_LIMITS): void {
  // Per open object or list: its members or items so far (a comma counts the next one; an empty one counts one).
  const counts: number[] = [];
  // Stryker disable next-line ArrayDeclaration: only a pushed kind is ever read (a comma counts inside a container only)
  const kinds: number[] = [];
  // Every container and every comma adds a value (a comma the next member or item; a container itself).
  let values = 0;
  // Stryker disable next-line EqualityOperator: one step past the end reads NaN, which is no character of any branch
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      // Skips the string: to its closing quote, over escaped characters.
      // Stryker disable next-line EqualityOperator: as above
      for (i++; i < text.length; i++) {
        const d = text.charCodeAt(i);
        if (d === BACKSLASH) i++;
        else if (d === QUOTE) break;
      }
    } else if (c === OPEN_OBJECT || c === OPEN_LIST) {
      if (counts.length >= limits.depth) throw tooLarge(`the request nests deeper than ${limits.depth} levels`);
      if (++values > limits.values) throw tooLarge(`the request holds more than ${limits.values} values`);
      counts.push(1);
      kinds.push(c);
    } else if (c === CLOSE_OBJECT || c === CLOSE_LIST) {
      counts.pop();
      kinds.pop();
    } else if (c === COMMA && counts.length > 0) {
      if (++values > limits.values) throw tooLarge(`the request holds more than ${limits.values} values`);
      const count = ++counts[counts.length - 1]!;
      const isObject = kinds[kinds.length - 1] === OPEN_OBJECT;
      if (isObject && count > limits.objectMembers) throw tooLarge(`an object of the request has more than ${limits.objectMembers} members`);
      if (!isObject && count > limits.listItems) throw tooLarge(`a list of the request has more than ${limits.listItems} items`);
    }
  }
}

const tooLarge = (message: string) => invalidArgument("request.malformed", message);
