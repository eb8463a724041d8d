import type { AnyStateMachine, AnyTransitionDefinition } from 'xstate';
import { descendants, nodePath } from './state-nodes.js';

// Transitions by name, so the transitions a traversal saw, the ones a real actor took (from
// `@xstate.microstep` inspection events) and the ones a machine defines can be compared as
// sets, also across `machine.provide()` copies, whose transition objects are new.

/**
 * How a transition's states are named: `key` uses state node keys (short; the machine's own
 * suites use it and their expectations are written in it), `path` uses `a.b` paths, which
 * stay unique when two parents have children of the same key (user machines: `path`).
 */
export type TransitionNaming = 'key' | 'path';

/**
 * A transition's name: source, trigger (`always` for eventless ones), its index among the
 * source's transitions for that trigger, the guard if any, and the targets, e.g.
 * `planning plan.done#1 [isMalformedPlan] → failed`.
 */
export function transitionName(
  t: AnyTransitionDefinition,
  naming: TransitionNaming = 'key',
): string {
  const name = naming === 'key' ? (node: typeof t.source) => node.key : nodePath;
  const siblings = t.eventType ? t.source.transitions.get(t.eventType) : t.source.always;
  const index = siblings?.indexOf(t) ?? -1;
  const guard =
    typeof t.guard === 'string'
      ? t.guard
      : t.guard && typeof t.guard === 'object' && 'type' in t.guard
        ? String(t.guard.type)
        : t.guard
          ? 'inline guard'
          : undefined;
  const target = t.target?.map(name).join(',') ?? '(stays)';
  return `${name(t.source)} ${t.eventType || 'always'}#${index}${guard ? ` [${guard}]` : ''} → ${target}`;
}

/**
 * Every transition the machine defines, at any depth, by `transitionName`: `on`, `always`,
 * `after` (as `xstate.after.<delay>.<state id>`) and invoke `onDone`/`onError` (as
 * `xstate.done.actor.<id>` / `xstate.error.actor.<id>`), in document order.
 */
export function allTransitionNames(
  machine: AnyStateMachine,
  naming: TransitionNaming = 'key',
): string[] {
  return [machine.root, ...descendants(machine.root)].flatMap((node) =>
    [...[...node.transitions.values()].flat(), ...(node.always ?? [])].map((t) =>
      transitionName(t, naming),
    ),
  );
}
