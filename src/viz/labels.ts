import type { AnyStateNode, AnyTransitionDefinition } from 'xstate';

// How guards, actions and events read on a diagram: by the names the machine gives them in
// `setup()`, never by their code. A reader sees `[canDo] / recordResponse, beforeDo`.

/** Names XState gives inline functions from the property they were written in. */
const PROPERTY_NAMES = new Set(['', 'guard', 'actions', 'entry', 'exit', 'anonymous']);

/** A guard as text: its name, `a && !b` for `and`/`not`, `in(state)` for `stateIn`. */
export function guardLabel(guard: unknown): string {
  if (typeof guard === 'string') return guard;
  if (typeof guard === 'function') {
    const higher = guard as { check?: unknown; guards?: unknown[]; stateValue?: unknown };
    if (typeof higher.check === 'function') {
      if ('stateValue' in higher) return `in(${stateValueText(higher.stateValue)})`;
      const parts = (higher.guards ?? []).map((g) => nested(guardLabel(g)));
      if (guard.name === 'not') return `!${parts[0] ?? ''}`;
      if (guard.name === 'or') return parts.join(' || ');
      if (guard.name === 'and') return parts.join(' && ');
    }
    return PROPERTY_NAMES.has(guard.name) ? 'inline' : guard.name;
  }
  if (guard && typeof guard === 'object' && 'type' in guard) {
    // The same combinations as toJSON writes them, so a machine built from its JSON reads alike.
    const { type, params, guards, stateValue } = guard as Record<string, unknown>;
    if (type === 'xstate.stateIn') return `in(${stateValueText(stateValue)})`;
    if (Array.isArray(guards)) {
      const parts = guards.map((g) => nested(guardLabel(g)));
      if (type === 'xstate.not') return `!${parts[0] ?? ''}`;
      if (type === 'xstate.or') return parts.join(' || ');
      if (type === 'xstate.and') return parts.join(' && ');
    }
    return withParams(String(type), params);
  }
  return 'inline';
}

/** A sub-guard of `and`/`or`/`not`, in parentheses when it is itself a combination. */
function nested(label: string): string {
  return / (&&|\|\|) /.test(label) ? `(${label})` : label;
}

function stateValueText(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/** An action as text: its name, a built-in's kind (`assign`, `sendTo`), or `inline`. */
export function actionLabel(action: unknown): string {
  if (typeof action === 'string') return action;
  if (typeof action === 'function') {
    // Built-in action creators (assign, sendTo, raise…) carry their kind in `type`.
    const builtIn = (action as { type?: unknown; resolve?: unknown }).type;
    if (typeof builtIn === 'string' && 'resolve' in action) return builtIn.replace(/^xstate\./, '');
    return PROPERTY_NAMES.has(action.name) ? 'inline' : action.name;
  }
  if (action && typeof action === 'object' && 'type' in action) {
    const type = String(action.type).replace(/^xstate\./, '');
    return withParams(type, (action as { params?: unknown }).params);
  }
  return 'inline';
}

/**
 * `name(v1, v2)` when the params are fixed and simple (`stopWith(tools-off)`, the policy a
 * reader wants to see); just the name when they are computed from the event or large.
 */
function withParams(name: string, params: unknown): string {
  if (!params || typeof params !== 'object' || Array.isArray(params)) return name;
  const values = Object.values(params);
  const simple = values.every((v) => ['string', 'number', 'boolean'].includes(typeof v));
  return simple && values.length > 0 && values.length <= 3
    ? `${name}(${values.map(String).join(', ')})`
    : name;
}

/** An invoke's name on a diagram: its `src` when named, else its id. */
export function invokeLabel(node: AnyStateNode, invokeId: string): string {
  const invoke = node.invoke.find((i) => i.id === invokeId);
  if (!invoke) return invokeId;
  return typeof invoke.src === 'string' && !invoke.src.startsWith('xstate.invoke.')
    ? invoke.src
    : invoke.id;
}

/**
 * What triggers a transition, readably: the event type, `always`, `after 120000ms` or
 * `after agentTimeout` (a named delay), `done: src` / `error: src` for an invoke's
 * onDone / onError, `done` for a compound state's onDone.
 */
export function triggerLabel(t: AnyTransitionDefinition): string {
  const delay = (t as { delay?: unknown }).delay;
  if (delay !== undefined) {
    return typeof delay === 'number' ? `after ${delay}ms` : `after ${String(delay)}`;
  }
  const type = t.eventType;
  if (!type) return 'always';
  for (const [prefix, word] of [
    ['xstate.done.actor.', 'done'],
    ['xstate.error.actor.', 'error'],
    ['xstate.snapshot.', 'snapshot'],
  ] as const) {
    if (type.startsWith(prefix))
      return `${word}: ${invokeLabel(t.source, type.slice(prefix.length))}`;
  }
  if (type === `xstate.done.state.${t.source.id}`) return 'done';
  return type;
}

/** A transition's whole label: `trigger [guard] / action, action`. */
export function transitionLabel(t: AnyTransitionDefinition): string {
  const guard = t.guard === undefined ? '' : ` [${guardLabel(t.guard)}]`;
  const actions = t.actions.length > 0 ? ` / ${t.actions.map(actionLabel).join(', ')}` : '';
  return `${triggerLabel(t)}${guard}${actions}`;
}

/** Characters a Mermaid label can hold as they are; others are written as `#<code>;`. */
const PLAIN = /[A-Za-z0-9 _.,/()[\]+*=!?@$~^'-]/;

/**
 * Mermaid's lexer reads `direction TB|BT|LR|RL` anywhere on a line (any case) as the diagram's
 * direction statement and drops the whole line (the arrow, or the state's name, is gone), and
 * `[[fork]]`, `[[join]]`, `[[choice]]` in a state's name as a pseudo-state. The first character
 * of such a keyword is written as an entity code, which breaks it and renders as the same text.
 */
const LINE_KEYWORD = /d(?=irection\s+(?:TB|BT|LR|RL))|\[(?=\[(?:fork|join|choice)\]\])/giy;

/**
 * Text Mermaid shows as written: characters that its grammar would read (`:`, `;`, `"`, `#`,
 * `%`, `{`, `<`, `|`…) and non-ASCII ones become entity codes (`#58;`), which Mermaid turns
 * back into the characters when it renders; so do the first characters of the keywords above. Line
 * breaks become spaces.
 */
export function escapeLabel(text: string): string {
  const flat = text.replace(/\s+/g, ' ');
  let out = '';
  let index = 0;
  for (const char of flat) {
    LINE_KEYWORD.lastIndex = index;
    const keyword = LINE_KEYWORD.test(flat);
    out += PLAIN.test(char) && !keyword ? char : `#${char.codePointAt(0)};`;
    index += char.length;
  }
  return out;
}
