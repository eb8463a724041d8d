import type { AnyMachineSnapshot, EventObject } from 'xstate';
import type { Edge } from './machine-graph.js';
import { stateName } from './state-nodes.js';
import { type Traversal, TraversalLimitError } from './traversal.js';

// Which paths a suite replays. xstate/graph's getSimplePaths lists every simple path to every
// vertex, has no bound on how many there are, and never takes an edge back into its own path
// (so a REJECT that returns to `drafting` is on no path). Here, over the same adjacency map:
//
// - 'simple': the maximal walks from the start that visit no snapshot twice, where a walk may
//   end by taking one edge back to a snapshot already on it. Prefixes are left out (a path's
//   replay checks every snapshot on the way), and every edge of the graph is on some path.
// - 'shortest': one shortest path to every snapshot, prefixes left out. Fewer paths; edges
//   off the shortest-path tree are not covered (coverage says which transitions miss).

export type PathKind = 'simple' | 'shortest';

export type GraphPath<S> = readonly Edge<S, EventObject>[];

export function enumeratePaths<S extends AnyMachineSnapshot>(
  traversal: Traversal<S>,
  kind: PathKind,
): GraphPath<S>[] {
  return kind === 'simple' ? simplePaths(traversal) : shortestPaths(traversal);
}

function simplePaths<S extends AnyMachineSnapshot>(t: Traversal<S>): GraphPath<S>[] {
  const { maxDepth, maxPaths } = t.limits;
  const paths: GraphPath<S>[] = [];
  const onPath = new Set<string>();
  const edges: Edge<S, EventObject>[] = [];
  const emit = () => {
    paths.push([...edges]);
    if (paths.length > maxPaths) throw tooManyPaths(t, 'simple');
  };
  const visit = (key: string): void => {
    const out = t.out.get(key) ?? [];
    if (out.length === 0) {
      emit();
      return;
    }
    onPath.add(key);
    for (const edge of out) {
      edges.push(edge);
      if (edges.length > maxDepth) {
        throw new TraversalLimitError(
          'maxDepth',
          `${t.caller}: limits.maxDepth (${maxDepth}) exceeded: a simple path is longer than ${maxDepth} events: ${edges.map((e) => t.events.name(e.event)).join(' → ')}. Raise limits.maxDepth, use paths: 'shortest', or make serializeState coarser.`,
        );
      }
      const next = t.endsOf(edge).to;
      if (onPath.has(next)) emit();
      else visit(next);
      edges.pop();
    }
    onPath.delete(key);
  };
  visit(t.initialKey);
  return paths;
}

function shortestPaths<S extends AnyMachineSnapshot>(t: Traversal<S>): GraphPath<S>[] {
  // Breadth first: the first edge into a vertex is on a shortest path to it.
  const parent = new Map<string, Edge<S, EventObject> | undefined>([[t.initialKey, undefined]]);
  const hasChild = new Set<string>();
  const queue = [t.initialKey];
  for (let key = queue.shift(); key !== undefined; key = queue.shift()) {
    for (const edge of t.out.get(key) ?? []) {
      const next = t.endsOf(edge).to;
      if (parent.has(next)) continue;
      parent.set(next, edge);
      hasChild.add(key);
      queue.push(next);
    }
  }
  const paths: GraphPath<S>[] = [];
  for (const key of parent.keys()) {
    if (hasChild.has(key)) continue;
    const path: Edge<S, EventObject>[] = [];
    for (let edge = parent.get(key); edge; edge = parent.get(t.endsOf(edge).from)) {
      path.unshift(edge);
      // A shortest path visits each vertex once: longer means the parents loop (a bug).
      if (path.length > parent.size) throw new Error(`${t.caller}: shortest paths loop`);
    }
    paths.push(path);
    if (paths.length > t.limits.maxPaths) throw tooManyPaths(t, 'shortest');
  }
  return paths;
}

function tooManyPaths<S extends AnyMachineSnapshot>(t: Traversal<S>, kind: PathKind) {
  const hint = kind === 'simple' ? `use paths: 'shortest', ` : '';
  return new TraversalLimitError(
    'maxPaths',
    `${t.caller}: limits.maxPaths (${t.limits.maxPaths}) exceeded: more than ${t.limits.maxPaths} ${kind} paths over ${t.graph.vertices.size} snapshots. To get fewer, ${hint}offer fewer events or outcomes, or make serializeState coarser; or raise limits.maxPaths.`,
  );
}

/** A path's name: its events, then where it ends, e.g. `classify:done#0 → APPROVE ⇒ done`. */
export function pathName<S extends AnyMachineSnapshot>(
  traversal: Traversal<S>,
  path: GraphPath<S>,
  end: S,
): string {
  const events = path.map((edge) => traversal.events.name(edge.event));
  return `${events.length > 0 ? events.join(' → ') : '(start)'} ⇒ ${stateName(end)}`;
}
