import type { AnyMachineSnapshot, AnyStateMachine, AnyStateNode, StateValue } from 'xstate';

// State nodes by name. A node is named by its path below the root, e.g. `review.waiting`:
// keys alone repeat across parents, paths do not, and paths survive `machine.provide()`
// copies (which build new node objects), so coverage can be compared across copies.

/** Every state node below `node`, depth first, in document order. */
export function descendants(node: AnyStateNode): AnyStateNode[] {
  return Object.values(node.states).flatMap((child) => [child, ...descendants(child)]);
}

/**
 * Every state node of a machine below the root, as `a.b` paths, in document order. History
 * pseudo-states are left out: a snapshot is never in one (entering it enters what it
 * remembers), so they are nothing to reach or cover.
 */
export function stateNodePaths(machine: AnyStateMachine): string[] {
  return realNodes(machine).map((node) => node.name);
}

/** A node's path below the root; the root itself is `(root)`. */
export function nodePath(node: AnyStateNode): string {
  return node.path.length > 0 ? node.path.join('.') : '(root)';
}

interface RealNode {
  readonly name: string;
  /** The state value that matches exactly the snapshots in this node. */
  readonly value: StateValue;
}

const realNodesOf = new WeakMap<AnyStateNode, readonly RealNode[]>();

function realNodes(machine: AnyStateMachine): readonly RealNode[] {
  let nodes = realNodesOf.get(machine.root);
  if (!nodes) {
    nodes = descendants(machine.root)
      .filter((node) => node.type !== 'history')
      .map((node) => ({ name: nodePath(node), value: stateValueOf(node.path) }));
    realNodesOf.set(machine.root, nodes);
  }
  return nodes;
}

/** `['a', 'b', 'c']` as the state value `{ a: { b: 'c' } }`. */
function stateValueOf(path: readonly string[]): StateValue {
  const [head, ...rest] = path;
  return rest.length === 0 ? (head as string) : { [head as string]: stateValueOf(rest) };
}

/**
 * The state nodes a snapshot is in (ancestors included), as `a.b` paths, root left out, in
 * document order. Asked through the public `snapshot.matches`.
 */
export function activeStateNodes(snapshot: AnyMachineSnapshot): string[] {
  return realNodes(snapshot.machine)
    .filter((node) => snapshot.matches(node.value as never))
    .map((node) => node.name);
}

/**
 * A snapshot's state value as one readable name: `done`, `review.waiting`, and for parallel
 * regions every leaf path joined by `, ` (`upload.busy, form.valid`); `(root)` for a machine
 * without child states, and ` (error)` appended for an error status. Used in path names.
 */
export function stateName(snapshot: AnyMachineSnapshot): string {
  // A machine without child states has the value {}: it is in its root.
  const name = leafPaths(snapshot.value).join(', ') || '(root)';
  return snapshot.status === 'error' ? `${name} (error)` : name;
}

function leafPaths(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  if (!value || typeof value !== 'object') return [];
  return Object.entries(value).flatMap(([key, child]) => {
    const below = leafPaths(child);
    return below.length > 0 ? below.map((path) => `${key}.${path}`) : [key];
  });
}
