/**
 * The JSON values in a model's answer, most likely first: the whole text if it parses, then
 * each fenced block that parses (```json … ``` or ``` … ```), then each outermost balanced
 * object or array in the prose, in order. Callers take the first one that validates, so
 * `See [1] … {"name": "x"}` still yields the object. Linear in the text: brackets are matched
 * in one pass, and only outermost spans are parsed. Never throws.
 */
export function* jsonCandidates(text: string): Generator<unknown> {
  const whole = tryParse(text.trim());
  if (whole) {
    yield whole.value;
    return; // the answer is JSON through and through: nothing else in it is a candidate
  }
  for (const match of text.matchAll(/```[a-zA-Z0-9_-]*\s*\n?([\s\S]*?)```/g)) {
    const fenced = tryParse((match[1] ?? '').trim());
    if (fenced) yield fenced.value;
  }
  for (const [start, end] of outermostBrackets(text)) {
    const candidate = tryParse(text.slice(start, end + 1));
    if (candidate) yield candidate.value;
  }
}

/** The first JSON value in the answer (see jsonCandidates), or undefined when there is none. */
export function extractJson(text: string): { readonly value: unknown } | undefined {
  for (const value of jsonCandidates(text)) return { value };
  return undefined;
}

function tryParse(text: string): { readonly value: unknown } | undefined {
  if (text === '') return undefined;
  try {
    return { value: JSON.parse(text) };
  } catch {
    return undefined;
  }
}

/**
 * [start, end] of each outermost balanced {…} or […] span, skipping brackets inside strings.
 * A bracket that closes the wrong kind resets the scan, as prose like `[1}` is not JSON.
 */
function* outermostBrackets(text: string): Generator<[number, number]> {
  const stack: string[] = [];
  let start = -1;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (inString) {
      if (ch === '\\') i++;
      else if (ch === '"') inString = false;
      continue;
    }
    if (ch === '"' && stack.length > 0) inString = true;
    else if (ch === '{' || ch === '[') {
      if (stack.length === 0) start = i;
      stack.push(ch === '{' ? '}' : ']');
    } else if ((ch === '}' || ch === ']') && stack.length > 0) {
      if (stack.pop() !== ch) {
        stack.length = 0;
        continue;
      }
      if (stack.length === 0) yield [start, i];
    }
  }
}
