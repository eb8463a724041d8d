import type { StateValue } from 'xstate';

// How toMermaid names state nodes, so that a viewer can find the node of an XState snapshot's
// state in a rendered diagram. A state node's id is `s_` followed by its path below the root,
// the keys joined with `__`, e.g. `running.planning` → `s_running__planning`. Letters and
// digits stay as they are; any other character becomes `_<hex code>x` (`needs-review` →
// `needs_2dxreview`), so ids hold only [A-Za-z0-9_] and two different paths never share an
// id: inside a key `_` is always followed by a hex digit, so `__` only ever separates keys.
// The prefix keeps ids clear of Mermaid's keywords (`state`, `note`, `class`, `default`,
// `style`, `click`, `scale`…) and of `root`, Mermaid's own id for the top-level document.

const SAFE = /^[A-Za-z0-9]$/;

function encodeKey(key: string): string {
  let out = '';
  for (const char of key) {
    out += SAFE.test(char) ? char : `_${(char.codePointAt(0) ?? 0).toString(16)}x`;
  }
  return out;
}

/**
 * The Mermaid id of the state node at `path` (its keys below the root, as in
 * `stateNode.path`): `['running', 'planning']` → `s_running__planning`. The root is `s_`:
 * the diagram draws it only for a parallel machine, as the box around its regions.
 */
export function stateIdOf(path: readonly string[]): string {
  return `s_${path.map(encodeKey).join('__')}`;
}

/**
 * The id of the "any state" node that carries what a compound state (or, for `[]`, the
 * machine) does in whichever of its states it is: its own entry, exit and invokes, and its
 * transitions to itself or its children, which Mermaid cannot draw from a composite box.
 * `any` for the machine, `any_<path>` otherwise: never a state node's id.
 */
export function anyStateIdOf(path: readonly string[]): string {
  return path.length === 0 ? 'any' : `any_${path.map(encodeKey).join('__')}`;
}

/**
 * The ids of every state node a snapshot is in, ancestors first, in the order of the state
 * value: `{ running: 'planning' }` → `['s_running', 's_running__planning']`. What a viewer
 * highlights for `snapshot.value`.
 */
export function stateIdsOf(value: StateValue): string[] {
  return activePaths(value, []).map(stateIdOf);
}

function activePaths(value: StateValue, prefix: readonly string[]): string[][] {
  if (typeof value === 'string') return [[...prefix, value]];
  return Object.entries(value).flatMap(([key, child]) => {
    const path = [...prefix, key];
    return child === undefined ? [path] : [path, ...activePaths(child, path)];
  });
}
