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
  for (const body of fencedBlocks(text)) {
    const fenced = tryParse(body.trim());
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

const FENCE = '```';

/**
 * The body of each closed code fence (```lang … ```), in order. A scan, not a regex: a lazy
 * regex over an opening fence that never closes backtracks over the rest of the text once per
 * character of its language tag (quadratic: a 1 MB answer blocked the event loop for minutes,
 * SPEC Q1). Here each character is looked at a bounded number of times. An opening fence
 * without a closing one ends the scan: no later fence could close anything either.
 */
function* fencedBlocks(text: string): Generator<string> {
  let open = text.indexOf(FENCE);
  while (open >= 0) {
    let start = open + FENCE.length;
    while (start < text.length && isLanguageChar(text.charCodeAt(start))) start++;
    const close = text.indexOf(FENCE, start);
    if (close < 0) return;
    yield text.slice(start, close);
    open = text.indexOf(FENCE, close + FENCE.length);
  }
}

/** [a-zA-Z0-9_-]: the characters of a fence's language tag, as in ```json. */
function isLanguageChar(code: number): boolean {
  return (
    (code >= 97 && code <= 122) || // a-z
    (code >= 65 && code <= 90) || // A-Z
    (code >= 48 && code <= 57) || // 0-9
    code === 95 || // _
    code === 45 // -
  );
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
