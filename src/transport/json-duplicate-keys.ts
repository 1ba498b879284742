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
  // Whether the next string is an object member name (not a value).
  let expectKey = false;
  let i = 0;
  while (i < text.length) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      const open = i++;
      let escaped = false;
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
        expectKey = false;
        break;
      case "}":
      case "]":
        stack.pop();
        expectKey = false;
        break;
      case ",": {
        const frame = stack[stack.length - 1];
        if (frame && frame.seen === undefined) frame.index++;
        expectKey = frame?.seen !== undefined;
        break;
      }
      case ":":
        expectKey = false;
        break;
    }
    i++;
  }
  return undefined;
}
