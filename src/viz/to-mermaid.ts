import type { AnyStateMachine, AnyStateNode, AnyTransitionDefinition } from 'xstate';
import { descendants } from '../graph/state-nodes.js';
import { actionLabel, escapeLabel, invokeLabel, transitionLabel } from './labels.js';
import { assertMachine, describe } from './machine-check.js';
import { anyStateIdOf, stateIdOf } from './state-ids.js';

export { stateIdOf, stateIdsOf } from './state-ids.js';

// Any XState v5 machine as a Mermaid `stateDiagram-v2` (SPEC D1), read from the machine's
// definition (its state nodes and their normalized transitions), so that what is drawn is
// what XState runs. Compound states are composite boxes, parallel regions are separated by
// `--`, and every transition is an arrow labelled `trigger [guard] / actions`. States are named
// by `stateIdOf` (src/viz/state-ids.ts) so a viewer can highlight a snapshot's states.
//
// Mermaid cannot draw an arrow from a composite box to a state inside it, and has no box for
// the machine itself. What a compound state (or the machine) does whichever of its states is
// active — its entry/exit actions, invokes, transitions that stay inside it or have no target —
// is drawn on one "any state" node inside it (`anyStateIdOf`). Transitions without a target
// on a simple state, and its entry/exit/invokes, are written inside its box.

export type MermaidDirection = 'TB' | 'BT' | 'LR' | 'RL';

export interface MermaidOptions {
  /** A title above the diagram (front matter); default the machine's id; `false` for none. */
  readonly title?: string | false;
  /** Layout direction; default Mermaid's, top to bottom. */
  readonly direction?: MermaidDirection;
  /** Entry/exit actions and invokes inside the state boxes; default true. */
  readonly details?: boolean;
}

const DIRECTIONS: readonly MermaidDirection[] = ['TB', 'BT', 'LR', 'RL'];

interface Edge {
  readonly from: string;
  readonly to: string;
  readonly label: string;
  /** The composite whose block the arrow is written in (undefined: the top level). */
  readonly block: AnyStateNode | undefined;
}

/** Renders `machine` as Mermaid `stateDiagram-v2` text. Deterministic: same machine, same text. */
export function toMermaid(machine: AnyStateMachine, options: MermaidOptions = {}): string {
  assertMachine(machine, 'toMermaid');
  const { title, direction, details } = checkOptions(options);
  const diagram = new Diagram(machine, details);
  const lines: string[] = [];
  const name = title === undefined ? (machine.id === '(machine)' ? false : machine.id) : title;
  if (name !== false) lines.push('---', `title: ${JSON.stringify(name)}`, '---');
  lines.push('stateDiagram-v2');
  if (direction) lines.push(`  direction ${direction}`);
  lines.push(...diagram.document());
  return `${lines.join('\n')}\n`;
}

interface CheckedOptions {
  readonly title: string | false | undefined;
  readonly direction: MermaidDirection | undefined;
  readonly details: boolean;
}

function checkOptions(options: MermaidOptions): CheckedOptions {
  if (!options || typeof options !== 'object') {
    throw new TypeError(`toMermaid: \`options\` must be an object, got ${describe(options)}`);
  }
  const { title, direction, details = true } = options;
  if (title !== undefined && title !== false && typeof title !== 'string') {
    throw new TypeError(`toMermaid: \`title\` must be a string or false, got ${describe(title)}`);
  }
  if (direction !== undefined && !DIRECTIONS.includes(direction)) {
    throw new TypeError(
      `toMermaid: \`direction\` must be one of ${DIRECTIONS.join(', ')}, got ${describe(direction)}`,
    );
  }
  if (typeof details !== 'boolean') {
    throw new TypeError(`toMermaid: \`details\` must be a boolean, got ${describe(details)}`);
  }
  return { title, direction, details };
}

class Diagram {
  private readonly edges: Edge[] = [];
  /** What each "any state" node says, by the compound state (or root) it stands for. */
  private readonly anyLines = new Map<AnyStateNode, string[]>();

  constructor(
    private readonly machine: AnyStateMachine,
    private readonly details: boolean,
  ) {
    for (const node of [machine.root, ...descendants(machine.root)]) this.collect(node);
  }

  /** The diagram's top level. */
  document(): string[] {
    const { root } = this.machine;
    if (root.type !== 'parallel') return this.block(root, 1);
    // Mermaid has no `--` at the top level: a parallel machine is drawn as a box of its
    // regions, as a parallel state is, with its "any state" node beside it.
    return [...this.declare(root, 1), ...this.anyNode(root, 1), ...this.edgeLines(root, 1)];
  }

  /** The lines inside a compound state's (or the machine's) block. */
  block(node: AnyStateNode, depth: number): string[] {
    const pad = '  '.repeat(depth);
    const lines: string[] = [];
    for (const child of children(node)) lines.push(...this.declare(child, depth));
    // A parallel child's "any state" node sits beside it: its own block holds only regions.
    for (const child of children(node)) {
      if (child.type === 'parallel') lines.push(...this.anyNode(child, depth));
    }
    if (node.type !== 'parallel') lines.push(...this.anyNode(node, depth));
    for (const target of node.initial?.target ?? []) {
      lines.push(`${pad}[*] --> ${this.idOf(target)}`);
    }
    lines.push(...this.edgeLines(node, depth));
    for (const child of children(node)) {
      if (child.type === 'final') lines.push(`${pad}${this.idOf(child)} --> [*]`);
    }
    return lines;
  }

  /** The arrows written in `node`'s block (the machine's: the top level). */
  private edgeLines(node: AnyStateNode, depth: number): string[] {
    const pad = '  '.repeat(depth);
    return this.edges
      .filter((e) => e.block === blockKey(node, this.machine))
      .map((edge) => `${pad}${edge.from} --> ${edge.to}${edge.label ? ` : ${edge.label}` : ''}`);
  }

  private declare(node: AnyStateNode, depth: number): string[] {
    const pad = '  '.repeat(depth);
    // The machine is declared only when it is parallel (see `document`): as a box, `s_`.
    const id = node === this.machine.root ? stateIdOf(node.path) : this.idOf(node);
    if (node.type === 'history') {
      const lines = [`${pad}state "${node.history === 'deep' ? 'H*' : 'H'}" as ${id}`];
      const target = historyTarget(node);
      if (target) lines.push(`${pad}${id} --> ${this.idOf(target)}`);
      return lines;
    }
    const head = `${pad}state "${escapeLabel(node.key)}" as ${id}`;
    if (node.type === 'compound') {
      return [`${head} {`, ...this.block(node, depth + 1), `${pad}}`];
    }
    if (node.type === 'parallel') {
      // Each child of a parallel state is a region: a box of its own, or a simple state.
      const regions = children(node).map((region) => this.declare(region, depth + 1));
      const body = regions.flatMap((region, i) => (i === 0 ? region : [`${pad}  --`, ...region]));
      return [`${head} {`, ...body, `${pad}}`];
    }
    return [head, ...this.descriptions(node).map((line) => `${pad}${id} : ${line}`)];
  }

  /** The "any state" node of a compound state or the root, when it has something to say. */
  private anyNode(node: AnyStateNode, depth: number): string[] {
    const lines = this.anyLines.get(node);
    if (!lines) return [];
    const pad = '  '.repeat(depth);
    const id = anyStateIdOf(node.path);
    const label = node === this.machine.root ? 'any state' : `any state of ${node.key}`;
    return [
      `${pad}state "${escapeLabel(label)}" as ${id}`,
      ...lines.map((line) => `${pad}${id} : ${line}`),
    ];
  }

  /** Entry/exit actions and invokes (with details) and the transitions without a target. */
  private descriptions(node: AnyStateNode): string[] {
    const lines: string[] = [];
    if (this.details) {
      const entry = configActions(node, 'entry');
      if (entry.length > 0) lines.push(`entry / ${entry.join(', ')}`);
      const exit = configActions(node, 'exit');
      if (exit.length > 0) lines.push(`exit / ${exit.join(', ')}`);
      for (const invoke of node.invoke) lines.push(`invoke ${invokeLabel(node, invoke.id)}`);
    }
    for (const t of transitionsOf(node)) if (!t.target?.length) lines.push(transitionLabel(t));
    return lines.map(escapeLabel);
  }

  private collect(node: AnyStateNode): void {
    const isBox = node.type === 'compound' || node.type === 'parallel';
    const isRoot = node === this.machine.root;
    if (isBox || isRoot) {
      const lines = this.descriptions(node);
      if (lines.length > 0) this.anyLines.set(node, lines);
    }
    for (const t of transitionsOf(node)) {
      const label = escapeLabel(transitionLabel(t));
      for (const target of t.target ?? []) {
        const inside = target !== node && isDescendant(target, node);
        // Mermaid draws arrows between boxes and states, but not from a box into itself.
        const from = (isBox && inside) || isRoot ? this.anyOf(node) : this.idOf(node);
        const to = this.idOf(target);
        const fromNode = from === this.idOf(node) ? node : anyHost(node);
        this.edges.push({
          from,
          to,
          label,
          block: commonBlock(fromNode, target === this.machine.root ? anyHost(target) : target),
        });
      }
    }
  }

  private anyOf(node: AnyStateNode): string {
    if (!this.anyLines.has(node)) this.anyLines.set(node, []);
    return anyStateIdOf(node.path);
  }

  /** A node's id; the machine itself, as a target (`#machineId`), is its "any state" node. */
  private idOf(node: AnyStateNode): string {
    return node === this.machine.root ? this.anyOf(node) : stateIdOf(node.path);
  }
}

/** Where an edge's block is looked up: the node whose block it is written in (root: undefined). */
function blockKey(node: AnyStateNode, machine: AnyStateMachine): AnyStateNode | undefined {
  return node === machine.root ? undefined : node;
}

/**
 * A stand-in for an "any state" node in block computations: a node declared inside the
 * compound state (for a parallel state, beside it; for the root, at the top level).
 */
function anyHost(node: AnyStateNode): AnyStateNode {
  return { parent: node.type === 'parallel' ? node.parent : node } as AnyStateNode;
}

/** The composites whose blocks enclose a node's declaration, innermost first. */
function containers(node: AnyStateNode): AnyStateNode[] {
  const out: AnyStateNode[] = [];
  for (let p = node.parent; p?.parent; p = p.parent) out.push(p);
  return out;
}

/**
 * The innermost block that encloses both ends of an arrow, skipping parallel states (whose
 * blocks hold only `--`-separated regions): an arrow is written in the block of the nearest
 * composite that contains both of its ends, else at the top level.
 */
function commonBlock(a: AnyStateNode, b: AnyStateNode): AnyStateNode | undefined {
  const outer = new Set(containers(b));
  return containers(a).find((c) => outer.has(c) && c.type !== 'parallel');
}

function children(node: AnyStateNode): AnyStateNode[] {
  return Object.values(node.states) as AnyStateNode[];
}

function isDescendant(node: AnyStateNode, ancestor: AnyStateNode): boolean {
  for (let p: AnyStateNode | undefined = node; p; p = p.parent) if (p === ancestor) return true;
  return false;
}

/** Every transition of a node: events, invoke onDone/onError, `after`, onDone, then `always`. */
export function transitionsOf(node: AnyStateNode): AnyTransitionDefinition[] {
  return [...[...node.transitions.values()].flat(), ...(node.always ?? [])];
}

/**
 * A node's entry or exit actions as written in its config: `node.entry` also holds the timers
 * XState adds for `after`, which the diagram shows as transitions.
 */
function configActions(node: AnyStateNode, key: 'entry' | 'exit'): string[] {
  const actions = (node.config as Record<string, unknown>)[key];
  if (actions === undefined) return [];
  return (Array.isArray(actions) ? actions : [actions]).map(actionLabel);
}

/** The state a history node enters when it has no history yet, if its config names one. */
function historyTarget(node: AnyStateNode): AnyStateNode | undefined {
  const target = (node.config as { target?: unknown }).target;
  const ref = Array.isArray(target) ? target[0] : target;
  if (typeof ref !== 'string' || !node.parent) return undefined;
  if (ref.startsWith('#')) return node.machine.getStateNodeById(ref.slice(1));
  let current: AnyStateNode | undefined = node.parent;
  for (const key of ref.split('.')) current = current?.states[key] as AnyStateNode | undefined;
  return current;
}
