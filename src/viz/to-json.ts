import type { AnyStateMachine, AnyStateNode, AnyTransitionDefinition } from 'xstate';
import { actionLabel } from './labels.js';
import { assertMachine, describe } from './machine-check.js';

// A machine as plain JSON in XState's own config shape (SPEC D1): what `createMachine()`
// accepts, and so what Stately Studio imports ("Import from code" takes a createMachine()
// call: `createMachine(<this JSON>)`). Guards, actions, actors and delays keep their names;
// what is code (guard and action bodies, `params` computed from the event, `input` mappers,
// the context factory) is left out, so it prints, diffs and renders anywhere.
//
// Built on XState's normalized definition rather than the raw config: targets are resolved
// (written as `#<state id>`, as `machine.toJSON()` writes them, with `.` and `\` in ids and
// keys escaped as XState reads them: `#acme\.agent.v1\.2`) and every transition form is
// already a list. `machine.toJSON()` itself is not importable as is: it is a definition (each
// node's `transitions` with `source` and `eventType`), has no `always` transitions, keeps
// invokes' onDone/onError only as `xstate.done.actor.*` events, lists the timers XState adds
// for `after` among entry and exit actions, and keeps functions that JSON.stringify drops
// silently (a `params` mapper, an inline guard).

export type JsonValue =
  | string
  | number
  | boolean
  | null
  | readonly JsonValue[]
  | { readonly [key: string]: JsonValue };

/** A guard: a name, or `{ type, params }`; `xstate.and`/`or`/`not` list their `guards`. */
export type GuardJSON =
  | string
  | {
      readonly type: string;
      readonly params?: JsonValue;
      readonly guards?: readonly GuardJSON[];
      readonly stateValue?: JsonValue;
    };

/** An action: a name, or `{ type, params }` (built-ins as `xstate.assign`, `xstate.sendTo`…). */
export type ActionJSON = string | { readonly type: string; readonly params?: JsonValue };

export interface TransitionJSON {
  /** Absolute state references, `#<state id>`; absent: the transition stays where it is. */
  readonly target?: readonly string[];
  readonly guard?: GuardJSON;
  readonly actions?: readonly ActionJSON[];
  readonly reenter?: true;
  readonly description?: string;
}

export interface InvokeJSON {
  readonly id: string;
  /** The actor's name in `setup({ actors })`, or `xstate.invoke.<id>` for inline logic. */
  readonly src: string;
  readonly systemId?: string;
  /** Present when the input is a fixed value rather than a function of the context. */
  readonly input?: JsonValue;
  readonly onDone?: readonly TransitionJSON[];
  readonly onError?: readonly TransitionJSON[];
  readonly onSnapshot?: readonly TransitionJSON[];
}

export interface StateNodeJSON {
  /** The node's XState id (`chain.thinking`): what `#…` targets refer to. */
  readonly id: string;
  readonly type?: 'parallel' | 'final' | 'history';
  readonly initial?: string;
  readonly history?: 'shallow' | 'deep';
  /** A history state's default target, as written in its config. */
  readonly target?: string;
  readonly states?: { readonly [key: string]: StateNodeJSON };
  readonly on?: { readonly [event: string]: readonly TransitionJSON[] };
  readonly always?: readonly TransitionJSON[];
  /** Keyed by delay: milliseconds (`"120000"`) or a named delay (`"agentTimeout"`). */
  readonly after?: { readonly [delay: string]: readonly TransitionJSON[] };
  readonly onDone?: readonly TransitionJSON[];
  readonly invoke?: readonly InvokeJSON[];
  readonly entry?: readonly ActionJSON[];
  readonly exit?: readonly ActionJSON[];
  readonly tags?: readonly string[];
  readonly description?: string;
  readonly meta?: JsonValue;
  /** A final state's (or the machine's) output, when it is a fixed value. */
  readonly output?: JsonValue;
}

export interface MachineJSON extends StateNodeJSON {
  readonly version?: string;
  /** Present when the machine's initial context is a fixed value. */
  readonly context?: JsonValue;
}

/** The machine's config as plain JSON: `JSON.stringify` it, or pass it to `createMachine`. */
export function toJSON(machine: AnyStateMachine): MachineJSON {
  assertMachine(machine, 'toJSON');
  const root = nodeJSON(machine.root);
  const version = machine.version;
  const context = jsonValue((machine.config as { context?: unknown }).context);
  return {
    ...root,
    ...(typeof version === 'string' && { version }),
    ...(context !== undefined && { context }),
  };
}

function nodeJSON(node: AnyStateNode): StateNodeJSON {
  const config = node.config as Record<string, unknown>;
  const children = Object.entries(node.states) as [string, AnyStateNode][];
  const own = ownTransitions(node);
  const initial = node.type === 'compound' ? node.initial?.target[0] : undefined;
  const target = config.target;
  const entry = configActions(config.entry);
  const exit = configActions(config.exit);
  const meta = jsonValue(node.meta);
  // XState reads `output` on final states and on the machine only.
  const output = node.type === 'final' || !node.parent ? jsonValue(config.output) : undefined;
  return {
    id: node.id,
    ...(node.type !== 'atomic' && node.type !== 'compound' && { type: node.type }),
    ...(initial && { initial: relativeKey(node, initial) }),
    ...(node.type === 'history' && { history: node.history || 'shallow' }),
    ...(node.type === 'history' && typeof target === 'string' && { target }),
    ...(children.length > 0 && {
      states: Object.fromEntries(children.map(([key, child]) => [key, nodeJSON(child)])),
    }),
    ...(own.on.size > 0 && { on: Object.fromEntries(own.on) }),
    ...(node.always?.length && { always: node.always.map(transitionJSON) }),
    ...(own.after.size > 0 && { after: Object.fromEntries(own.after) }),
    ...(own.onDone && { onDone: own.onDone }),
    ...(node.invoke.length > 0 && { invoke: node.invoke.map((i) => invokeJSON(node, i)) }),
    ...(entry.length > 0 && { entry }),
    ...(exit.length > 0 && { exit }),
    ...(node.tags.length > 0 && { tags: [...node.tags] }),
    ...(node.description !== undefined && { description: node.description }),
    ...(meta !== undefined && { meta }),
    ...(output !== undefined && { output }),
  };
}

interface OwnTransitions {
  readonly on: Map<string, TransitionJSON[]>;
  readonly after: Map<string, TransitionJSON[]>;
  readonly onDone: TransitionJSON[] | undefined;
}

/** A node's transitions by where they are written: `on`, `after`, `onDone` (invokes apart). */
function ownTransitions(node: AnyStateNode): OwnTransitions {
  const invokeEvents = new Set(
    node.invoke.flatMap((i) => [
      `xstate.done.actor.${i.id}`,
      `xstate.error.actor.${i.id}`,
      `xstate.snapshot.${i.id}`,
    ]),
  );
  const on = new Map<string, TransitionJSON[]>();
  const after = new Map<string, TransitionJSON[]>();
  let onDone: TransitionJSON[] | undefined;
  for (const [eventType, transitions] of node.transitions) {
    if (invokeEvents.has(eventType)) continue;
    for (const t of transitions) {
      const delay = (t as { delay?: unknown }).delay;
      if (delay !== undefined) {
        const key = String(delay);
        after.set(key, [...(after.get(key) ?? []), transitionJSON(t)]);
      } else if (eventType === `xstate.done.state.${node.id}`) {
        onDone = [...(onDone ?? []), transitionJSON(t)];
      } else {
        on.set(eventType, [...(on.get(eventType) ?? []), transitionJSON(t)]);
      }
    }
  }
  return { on, after, onDone };
}

function invokeJSON(node: AnyStateNode, invoke: AnyStateNode['invoke'][number]): InvokeJSON {
  const handlers = (event: string) => node.transitions.get(event)?.map(transitionJSON);
  const onDone = handlers(`xstate.done.actor.${invoke.id}`);
  const onError = handlers(`xstate.error.actor.${invoke.id}`);
  const onSnapshot = handlers(`xstate.snapshot.${invoke.id}`);
  const input = jsonValue(invoke.input);
  return {
    id: invoke.id,
    src: String(invoke.src),
    ...(typeof invoke.systemId === 'string' && { systemId: invoke.systemId }),
    ...(input !== undefined && { input }),
    ...(onDone && { onDone }),
    ...(onError && { onError }),
    ...(onSnapshot && { onSnapshot }),
  };
}

function transitionJSON(t: AnyTransitionDefinition): TransitionJSON {
  const actions = t.actions.map(actionJSON);
  return {
    ...(t.target?.length && { target: t.target.map(targetRef) }),
    ...(t.guard !== undefined && { guard: guardJSON(t.guard) }),
    ...(actions.length > 0 && { actions }),
    ...(t.reenter && { reenter: true as const }),
    ...(typeof t.description === 'string' && { description: t.description }),
  };
}

function guardJSON(guard: unknown): GuardJSON {
  if (typeof guard === 'string') return guard;
  if (typeof guard === 'function') {
    const higher = guard as { check?: unknown; guards?: unknown[]; stateValue?: unknown };
    if (typeof higher.check === 'function' && 'stateValue' in higher) {
      return { type: 'xstate.stateIn', stateValue: jsonValue(higher.stateValue) ?? null };
    }
    if (typeof higher.check === 'function' && Array.isArray(higher.guards)) {
      return { type: `xstate.${guard.name}`, guards: higher.guards.map(guardJSON) };
    }
    return { type: inlineName(guard.name) };
  }
  if (guard && typeof guard === 'object' && 'type' in guard) {
    return withParams(String(guard.type), (guard as { params?: unknown }).params);
  }
  throw new TypeError(
    `toJSON: a guard must be a name, an object or a function, got ${describe(guard)}`,
  );
}

function actionJSON(action: unknown): ActionJSON {
  if (typeof action === 'string') return action;
  if (typeof action === 'function') {
    const builtIn = (action as { type?: unknown }).type;
    if (typeof builtIn === 'string' && 'resolve' in action) return { type: builtIn };
    return { type: actionLabel(action) };
  }
  if (action && typeof action === 'object' && 'type' in action) {
    return withParams(String(action.type), (action as { params?: unknown }).params);
  }
  throw new TypeError(
    `toJSON: an action must be a name, an object or a function, got ${describe(action)}`,
  );
}

/** `{ type, params }` with the params kept only when they are a value, not a mapper. */
function withParams(type: string, params: unknown): { type: string; params?: JsonValue } {
  const value = jsonValue(params);
  return value === undefined ? { type } : { type, params: value };
}

function inlineName(name: string): string {
  return ['', 'guard', 'anonymous'].includes(name) ? 'inline' : name;
}

function configActions(actions: unknown): ActionJSON[] {
  if (actions === undefined) return [];
  return (Array.isArray(actions) ? actions : [actions]).map(actionJSON);
}

/**
 * A target as `#<id>`. XState splits a target at `.` (the first part an id, the rest keys) and
 * reads `\` as an escape: a node with the id XState gives it (`<machine id>.<its path>`) is
 * written as the machine's id and its keys, each escaped (`#acme\.agent.v1\.2`, and plainly
 * `#chain.failed`); a node with an id of its own, as that id, escaped.
 */
function targetRef(node: AnyStateNode): string {
  const machineId = node.machine.id;
  const parts = [machineId, ...node.path];
  return node.id === parts.join('.')
    ? `#${parts.map(escapeRef).join('.')}`
    : `#${escapeRef(node.id)}`;
}

function escapeRef(text: string): string {
  return text.replace(/[\\.]/g, (char) => `\\${char}`);
}

/** The key that names `target` as `node`'s initial state: its path below `node`. */
function relativeKey(node: AnyStateNode, target: AnyStateNode): string {
  return target.path.slice(node.path.length).join('.');
}

/**
 * `value` when it is plain JSON (functions, class instances, `undefined`, non-finite numbers
 * anywhere inside make it not JSON), else undefined.
 */
function jsonValue(value: unknown): JsonValue | undefined {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return value;
  if (typeof value === 'number') return Number.isFinite(value) ? value : undefined;
  if (Array.isArray(value)) {
    const items = value.map(jsonValue);
    return items.every((item) => item !== undefined) ? (items as JsonValue[]) : undefined;
  }
  if (typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype) {
    const entries = Object.entries(value).map(([k, v]) => [k, jsonValue(v)] as const);
    return entries.every(([, v]) => v !== undefined)
      ? (Object.fromEntries(entries) as JsonValue)
      : undefined;
  }
  return undefined;
}
