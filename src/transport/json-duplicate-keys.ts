/** Key names and paths in answers are cut short: a hostile body must not become a huge answer. */
const MAX_NAME = 64;
const MAX_PATH = 256;

/** An object's names so far and the last of them (every object below the innermost one has one), or a list's index. */
type Frame = { seen: Set<string>; key: string } | { seen: undefined; index: number };

const QUOTE = 0x22;
const BACKSLASH = 0x5c;

function pathOf(stack: Frame[]): string {
  let path = "";
  for (const frame of stack) {
    if (frame.seen === undefined) path += `[${frame.index}]`;
    else {
      const key = frame.key.length > MAX_NAME ? `${frame.key.slice(0, MAX_NAME)}…` : frame.key;
      path += path ? `.${key}` : key;
    }
  }
  return path.length > MAX_PATH ? `${path.slice(0, MAX_PATH)}…` : path;
}

/**
 * The path (`profile.firstName`, `idps[2].configId`) of the first key that appears twice in one
 * JSON object of `text`, at any depth, or undefined. JSON.parse keeps the last of two equal keys
 * without a word, so a body could say two things and be read as one of them; only the text shows
 * it. `text` must be JSON that JSON.parse accepted. One pass, one Set of names per open object.
 */
export function duplicateKeyPath(text: string): string | undefined {
  const stack: Frame[] = [];
  // Whether the next string is an object member name, not a value: true after `{` and `,` (a `,` in a list too: only
  // an object's frame keeps names), false after any string, so a member's value is never taken for a name.
  // Stryker disable next-line BooleanLiteral: the text is JSON, so a name comes only after a `{`, which sets it
  let expectKey = false;
  let i = 0;
  // Stryker disable next-line EqualityOperator: one step past the end reads no character, so it changes nothing
  while (i < text.length) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      const open = i++;
      // Stryker disable next-line BooleanLiteral: decoding a name without escapes gives the same name (only slower)
      let escaped = false;
      // Stryker disable next-line EqualityOperator: as above (JSON.parse accepted the text: every string is closed)
      while (i < text.length) {
        const d = text.charCodeAt(i);
        if (d === BACKSLASH) {
          escaped = true;
          i += 2;
        } else if (d === QUOTE) break;
        else i++;
      }
      const close = i++;
      const frame = stack[stack.length - 1];
      // Stryker disable next-line OptionalChaining: a name follows a `{` or a `,`, so it always has a frame
      if (expectKey && frame?.seen) {
        // Escapes are decoded, so "a" and "\u0061" are the same key, as JSON.parse sees them.
        const name = escaped ? (JSON.parse(text.slice(open, close + 1)) as string) : text.slice(open + 1, close);
        frame.key = name;
        if (frame.seen.has(name)) return pathOf(stack);
        frame.seen.add(name);
      }
      expectKey = false;
      continue;
    }
    switch (text[i]) {
      case "{":
        // Stryker disable next-line StringLiteral: read only once a name was seen (a value in an object follows its name)
        stack.push({ seen: new Set(), key: "" });
        expectKey = true;
        break;
      case "[":
        stack.push({ seen: undefined, index: 0 });
        break;
      case "}":
      case "]":
        stack.pop();
        break;
      case ",": {
        const frame = stack[stack.length - 1];
        // Stryker disable next-line ConditionalExpression,LogicalOperator: a `,` is always inside an object or a list, and an object's frame has no index to read
        if (frame && frame.seen === undefined) frame.index++;
        expectKey = true;
        break;
      }
    }
    i++;
  }
  return undefined;
}
