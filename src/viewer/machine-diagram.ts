import type { AnyStateMachine, StateValue } from 'xstate';
import { isRecord } from '../is-record.js';
import { stateIdsOf, toMermaid } from '../viz/to-mermaid.js';

// The viewer draws a run's machine with the Mermaid export the CLI prints (SPEC D1), and lights
// up states by the node ids that export gives them: the page never has to know how a state
// path becomes a Mermaid id, it is told which ids are active.

/**
 * The state value as RunObserver reports it: a state name (`thinking`), JSON for compound and
 * parallel values (`{"running":"planning"}`), or the value itself.
 */
export function stateValueOf(reported: unknown): StateValue | undefined {
  if (typeof reported === 'string' && reported.startsWith('{')) {
    try {
      return stateValueOf(JSON.parse(reported));
    } catch {
      return undefined; // not a value a machine could have had: nothing to light up
    }
  }
  if (typeof reported === 'string' || isRecord(reported)) return reported as StateValue;
  return undefined;
}

/** The Mermaid node ids of every active state, ancestors first (see `stateIdsOf`). */
export function activeNodeIds(reported: unknown): string[] {
  const value = stateValueOf(reported);
  return value === undefined ? [] : stateIdsOf(value);
}

export interface MachineDiagrams {
  /** States and arrows only, left to right: small enough to follow a run at a glance. */
  readonly plain: string;
  /** `toMermaid(machine)` as the CLI prints it: every trigger, guard and action. */
  readonly labelled: string;
}

const made = new WeakMap<AnyStateMachine, MachineDiagrams>();

/** The machine's two diagrams, made once per machine: a batch of a thousand runs draws one chain. */
export function diagramsOf(machine: AnyStateMachine): MachineDiagrams {
  let diagrams = made.get(machine);
  if (!diagrams) {
    diagrams = {
      plain: withoutLabels(toMermaid(machine, { title: false, details: false, direction: 'LR' })),
      labelled: toMermaid(machine, { title: false }),
    };
    made.set(machine, diagrams);
  }
  return diagrams;
}

const EDGE = /^(\s*)(\S+) --> (\S+)(?: : .*)?$/;
const DESCRIPTION = /^\s*\S+ : /;

/**
 * Mermaid text with its arrows unlabelled, one arrow per pair of states, and no text inside
 * the states. The labels are what make the chain's diagram 2,500 px wide: the viewer shows
 * them on request (`labelled`), and the plain shape the rest of the time.
 */
export function withoutLabels(mermaid: string): string {
  const seen = new Set<string>();
  const lines: string[] = [];
  for (const line of mermaid.split('\n')) {
    const edge = EDGE.exec(line);
    if (edge) {
      const [, pad, from, to] = edge;
      const arrow = `${pad}${from} --> ${to}`;
      if (!seen.has(arrow)) lines.push(arrow);
      seen.add(arrow);
    } else if (!DESCRIPTION.test(line)) {
      lines.push(line);
    }
  }
  return lines.join('\n');
}
