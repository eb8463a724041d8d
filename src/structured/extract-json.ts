/**
 * Finds the JSON value in a model's answer: the whole text if it parses, else the first
 * fenced block that parses (```json … ``` or ``` … ```), else the first balanced object or
 * array in the prose. Returns `undefined` when there is none; never throws.
 */
export function extractJson(text: string): { readonly value: unknown } | undefined {
  const whole = tryParse(text.trim());
  if (whole) return whole;
  for (const match of text.matchAll(/```[a-zA-Z0-9_-]*\s*\n?([\s\S]*?)```/g)) {
    const fenced = tryParse((match[1] ?? '').trim());
    if (fenced) return fenced;
  }
  for (let start = 0; start < text.length; start++) {
    const ch = text[start];
    if (ch !== '{' && ch !== '[') continue;
    const end = balancedEnd(text, start);
    if (end === -1) continue;
    const candidate = tryParse(text.slice(start, end + 1));
    if (candidate) return candidate;
  }
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

/** Index of the bracket closing the one at `start`, skipping brackets inside strings; -1 if none. */
function balancedEnd(text: string, start: number): number {
  const stack: string[] = [];
  let inString = false;
  for (let i = start; i < text.length; i++) {
    const ch = text[i];
    if (inString) {
      if (ch === '\\') i++;
      else if (ch === '"') inString = false;
      continue;
    }
    if (ch === '"') inString = true;
    else if (ch === '{' || ch === '[') stack.push(ch === '{' ? '}' : ']');
    else if (ch === '}' || ch === ']') {
      if (stack.pop() !== ch) return -1;
      if (stack.length === 0) return i;
    }
  }
  return -1;
}
