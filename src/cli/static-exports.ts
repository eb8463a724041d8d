// The names an ES module exports, read from its text without running it, so that `graph` and
// `paths` can say an export is missing before the module's top-level code runs (it may start
// servers, read files, call a model). A linear scan, not a parser: the installed package has
// no TypeScript compiler, and Node's module lexer is not public.
//
// What it reads: `export const|let|var` (each declarator of a plain name), `export function`,
// `export async function`, `export function*`, `export class`, `export abstract class`,
// `export enum`, `export namespace`, `export default`, `export { a, b as c }` (with or
// without `from`), `export * as ns from`; type-only exports (`export type`, `export
// interface`, `export declare`, `export { type T }`, `export const enum`) are left out, as
// at run time. It skips comments, strings, template literals and regular expressions.
// What makes it give up (undefined: import the module to know): `export * from` (the names
// are another module's), `export =`, `export import`, a destructured declaration, a module
// with no `export` at all (CommonJS, or a module that only has side effects), and text it
// cannot follow (an unterminated string or comment, brackets that do not balance).

const IDENTIFIER = /[A-Za-z_$\u0080-\uffff][\w$\u0080-\uffff]*/y;
const PUNCTUATION_BEFORE_REGEX = new Set([...'(,=:[!&|?{};+-*%<>~^']);
const KEYWORDS_BEFORE_REGEX = new Set([
  'return',
  'typeof',
  'instanceof',
  'in',
  'of',
  'new',
  'delete',
  'void',
  'throw',
  'case',
  'do',
  'else',
  'yield',
  'await',
]);

interface Token {
  readonly text: string;
  /** Bracket depth before the token: 0 is the module's top level. */
  readonly depth: number;
  /** First token on its line. */
  readonly lineStart: boolean;
}

/** The runtime export names of `source`, or undefined when the scan cannot be sure of them. */
export function staticExports(source: string): ReadonlySet<string> | undefined {
  const tokens = tokenize(source);
  if (!tokens) return undefined;
  const names = new Set<string>();
  let sawExport = false;
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i] as Token;
    if (token.text !== 'export' || token.depth !== 0) continue;
    // `x.export`, `{ export: 1 }` are not statements.
    const before = tokens[i - 1];
    if (before && before.depth === 0 && (before.text === '.' || before.text === '?.')) continue;
    sawExport = true;
    const read = readExport(tokens, i + 1, names);
    if (read === undefined) return undefined;
    i = read - 1;
  }
  return sawExport ? names : undefined;
}

/** Reads one export statement from `at`; returns where to go on, or undefined to give up. */
function readExport(tokens: readonly Token[], at: number, names: Set<string>): number | undefined {
  const text = (i: number) => tokens[i]?.text;
  let i = at;
  const first = text(i);
  switch (first) {
    case 'default':
      names.add('default');
      return i + 1;
    case 'type':
    case 'interface':
    case 'declare':
      // `export type { a }` and `export type X = …`: types only.
      return i + 1;
    case '=':
    case 'import':
      return undefined;
    case '*':
      // `export * as ns from '…'` names one export; `export * from` names another module's.
      if (text(i + 1) === 'as' && isName(text(i + 2))) {
        names.add(unquote(text(i + 2) as string));
        return i + 3;
      }
      return undefined;
    case '{':
      return readSpecifiers(tokens, i + 1, names);
    case 'async':
      i++;
      break;
    case 'abstract':
      i++;
      break;
  }
  const keyword = text(i);
  if (
    keyword === 'function' ||
    keyword === 'class' ||
    keyword === 'enum' ||
    keyword === 'namespace'
  ) {
    let nameAt = i + 1;
    if (text(nameAt) === '*') nameAt++;
    const name = text(nameAt);
    if (!isIdentifier(name)) return undefined;
    names.add(name as string);
    return nameAt + 1;
  }
  if (keyword === 'const' || keyword === 'let' || keyword === 'var') {
    if (keyword === 'const' && text(i + 1) === 'enum') return i + 2;
    return readDeclarators(tokens, i + 1, names);
  }
  return undefined;
}

/** `{ a, b as c, type T, default as d } [from '…']`: the exported names (c, not b). */
function readSpecifiers(
  tokens: readonly Token[],
  at: number,
  names: Set<string>,
): number | undefined {
  let i = at;
  while (i < tokens.length && tokens[i]?.text !== '}') {
    const parts: string[] = [];
    while (i < tokens.length && tokens[i]?.text !== ',' && tokens[i]?.text !== '}') {
      parts.push(tokens[i]?.text as string);
      i++;
    }
    if (tokens[i]?.text === ',') i++;
    if (parts.length === 0) continue;
    if (parts[0] === 'type' && parts.length > 1 && parts[1] !== 'as') continue;
    const exported = parts.length >= 3 && parts.at(-2) === 'as' ? parts.at(-1) : parts[0];
    if (parts.length !== 1 && parts.length !== 3) return undefined;
    if (!isName(exported)) return undefined;
    names.add(unquote(exported as string));
  }
  return i < tokens.length ? i + 1 : undefined;
}

/**
 * `a = 1, b = f(x, y)`: each declarator's name, up to the `;` that ends the statement or the
 * next top-level statement on a line of its own. A destructuring pattern gives up.
 */
function readDeclarators(
  tokens: readonly Token[],
  at: number,
  names: Set<string>,
): number | undefined {
  let i = at;
  for (;;) {
    const name = tokens[i]?.text;
    if (!isIdentifier(name)) return undefined;
    names.add(name as string);
    i++;
    // Skip the type and initializer: to a top-level `,` (another declarator) or the end. A
    // comma between a type's angle brackets (`Record<K, V>`) separates no declarators.
    let angles = 0;
    let next: Token | undefined = tokens[i];
    while (
      next &&
      !(next.depth === 0 && angles === 0 && (next.text === ',' || next.text === ';'))
    ) {
      if (next.depth === 0 && next.lineStart && STATEMENT_STARTS.has(next.text)) return i;
      if (next.depth === 0 && next.text === '<') angles++;
      else if (next.depth === 0 && next.text === '>' && angles > 0) angles--;
      i++;
      next = tokens[i];
    }
    if (!next || next.text === ';') return i;
    i++; // the comma
  }
}

const STATEMENT_STARTS = new Set([
  'export',
  'import',
  'const',
  'let',
  'var',
  'function',
  'class',
  'async',
  'interface',
  'type',
  'enum',
  'declare',
  'if',
  'for',
  'while',
  'await',
]);

function isIdentifier(text: string | undefined): boolean {
  if (text === undefined) return false;
  IDENTIFIER.lastIndex = 0;
  return IDENTIFIER.test(text) && IDENTIFIER.lastIndex === text.length;
}

/** An identifier, or a string name (`export { x as "a-b" }`). */
function isName(text: string | undefined): boolean {
  return isIdentifier(text) || (text !== undefined && /^(["']).*\1$/s.test(text));
}

function unquote(text: string): string {
  return /^["']/.test(text) ? text.slice(1, -1) : text;
}

/**
 * The module's tokens that matter here: names, punctuation, and strings (kept whole, for
 * `export { x as "a-b" }`); comments, template literals and regular expressions are skipped.
 * Undefined when the text does not end where it began (unbalanced, unterminated).
 */
function tokenize(source: string): Token[] | undefined {
  const tokens: Token[] = [];
  let depth = 0;
  let lineStart = true;
  let i = 0;
  const n = source.length;
  // Brackets open when a template's `${` was entered, to know which `}` ends it.
  const templates: number[] = [];
  const push = (text: string) => {
    tokens.push({ text, depth, lineStart });
    lineStart = false;
  };
  const regexAllowed = () => {
    const last = tokens.at(-1);
    if (!last) return true;
    return PUNCTUATION_BEFORE_REGEX.has(last.text) || KEYWORDS_BEFORE_REGEX.has(last.text);
  };
  while (i < n) {
    const c = source[i] as string;
    if (c === '\n') {
      lineStart = true;
      i++;
    } else if (c === ' ' || c === '\t' || c === '\r') {
      i++;
    } else if (c === '/' && source[i + 1] === '/') {
      const end = source.indexOf('\n', i);
      i = end === -1 ? n : end;
    } else if (c === '/' && source[i + 1] === '*') {
      const end = source.indexOf('*/', i + 2);
      if (end === -1) return undefined;
      if (source.slice(i, end).includes('\n')) lineStart = true;
      i = end + 2;
    } else if (c === '"' || c === "'") {
      const end = stringEnd(source, i, c);
      if (end === undefined) return undefined;
      push(source.slice(i, end));
      i = end;
    } else if (c === '`') {
      const end = templateEnd(source, i + 1);
      if (end === undefined) return undefined;
      if (source[end - 1] === '{') {
        // `${` entered: the template goes on after the matching `}`.
        templates.push(depth);
        depth++;
      }
      push('`');
      i = end;
    } else if (c === '}' && templates.length > 0 && templates.at(-1) === depth - 1) {
      templates.pop();
      depth--;
      const end = templateEnd(source, i + 1);
      if (end === undefined) return undefined;
      if (source[end - 1] === '{') {
        templates.push(depth);
        depth++;
      }
      i = end;
    } else if (c === '/' && regexAllowed()) {
      const end = regexEnd(source, i + 1);
      if (end === undefined) return undefined;
      push('/regex/');
      i = end;
    } else if (c === '(' || c === '[' || c === '{') {
      push(c);
      depth++;
      i++;
    } else if (c === ')' || c === ']' || c === '}') {
      depth--;
      if (depth < 0) return undefined;
      push(c);
      i++;
    } else {
      IDENTIFIER.lastIndex = i;
      if (IDENTIFIER.test(source)) {
        push(source.slice(i, IDENTIFIER.lastIndex));
        i = IDENTIFIER.lastIndex;
      } else if (c === '?' && source[i + 1] === '.') {
        push('?.');
        i += 2;
      } else {
        // Numbers and operators, a character at a time: only their first character matters.
        push(c);
        i++;
      }
    }
  }
  return depth === 0 && templates.length === 0 ? tokens : undefined;
}

/** Past the closing quote of a string opened at `start`; undefined when a line ends first. */
function stringEnd(source: string, start: number, quote: string): number | undefined {
  for (let i = start + 1; i < source.length; i++) {
    const c = source[i];
    if (c === '\\') i++;
    else if (c === quote) return i + 1;
    else if (c === '\n') return undefined;
  }
  return undefined;
}

/** Past the end of a template's text from `from`: after its closing backtick, or after `${`. */
function templateEnd(source: string, from: number): number | undefined {
  for (let i = from; i < source.length; i++) {
    const c = source[i];
    if (c === '\\') i++;
    else if (c === '`') return i + 1;
    else if (c === '$' && source[i + 1] === '{') return i + 2;
  }
  return undefined;
}

/** Past a regular expression's flags; `[...]` may hold a `/`. Undefined at a line's end. */
function regexEnd(source: string, from: number): number | undefined {
  let inClass = false;
  for (let i = from; i < source.length; i++) {
    const c = source[i];
    if (c === '\\') i++;
    else if (c === '\n') return undefined;
    else if (c === '[') inClass = true;
    else if (c === ']') inClass = false;
    else if (c === '/' && !inClass) {
      let end = i + 1;
      while (end < source.length && /[a-z]/.test(source[end] as string)) end++;
      return end;
    }
  }
  return undefined;
}
