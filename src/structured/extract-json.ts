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
    LANGUAGE_TAG.lastIndex = open + FENCE.length;
    LANGUAGE_TAG.exec(text); // always matches, maybe empty
    const start = LANGUAGE_TAG.lastIndex;
    const close = text.indexOf(FENCE, start);
    if (close < 0) return;
    yield text.slice(start, close);
    open = text.indexOf(FENCE, close + FENCE.length);
  }
}

/** The language tag after an opening fence, as in ```json: one greedy class, linear. */
const LANGUAGE_TAG = /[a-zA-Z0-9_-]*/y;

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
  let i = 0;
  for (;;) {
    // Jump to the next character that matters where the scan is (one-character classes, so
    // each jump is linear): most of a long answer is prose, skipped at native speed.
    const next = inString ? IN_STRING : stack.length > 0 ? IN_BRACKETS : OPENING;
    next.lastIndex = i;
    const found = next.exec(text);
    if (!found) return;
    i = found.index;
    const ch = found[0];
    if (inString) {
      if (ch === '\\') i++;
      else inString = false;
    } else if (ch === '"') inString = true;
    else if (ch === '{' || ch === '[') {
      if (stack.length === 0) start = i;
      stack.push(ch === '{' ? '}' : ']');
    } else if (stack.pop() !== ch) stack.length = 0;
    else if (stack.length === 0) yield [start, i];
    i++;
  }
}

// Set `lastIndex` right before each `exec`: a generator may be paused between two of them.
const OPENING = /[{[]/g;
const IN_BRACKETS = /[{}[\]"]/g;
const IN_STRING = /["\\]/g;
