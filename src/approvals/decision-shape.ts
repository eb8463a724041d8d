import { InputError } from '../errors.js';
import { nearestName } from '../options/nearest-name.js';

// SPEC H2: decisions come from outside a run — `approvals(store)`, a run's `approve` callback,
// an app machine's APPROVE / REJECT events — and a bad one used to be a plain TypeError, or a
// reason of any type passed on as it was. Every entry point checks what it was given here
// (pure: the machines use it too) and refuses it with an InputError naming each problem.

type FieldType = 'string' | 'boolean';

/** The fields an object may have: their type, and whether it must be there. */
export type Shape = Readonly<
  Record<string, { readonly type: FieldType; readonly required?: true }>
>;

/** A decision on one call, as `approvals(store).decide(runId, decision)` takes it. */
export const DECISION_SHAPE: Shape = {
  callId: { type: 'string', required: true },
  approved: { type: 'boolean', required: true },
  reason: { type: 'string' },
};

/** An object `approve` callback's answer: `{ approved, reason? }`. */
export const ANSWER_SHAPE: Shape = {
  approved: { type: 'boolean', required: true },
  reason: { type: 'string' },
};

/** The APPROVE and REJECT events an app machine sends a chain or tool loop actor. */
export const DECISION_EVENT_SHAPES: Readonly<Record<'APPROVE' | 'REJECT', Shape>> = {
  APPROVE: { type: { type: 'string', required: true }, callId: { type: 'string', required: true } },
  REJECT: {
    type: { type: 'string', required: true },
    callId: { type: 'string', required: true },
    reason: { type: 'string' },
  },
};

/**
 * Every problem of `value` against `shape`, in key order: not an object, unknown keys (with
 * the nearest field's name), missing or mistyped fields, a blank call id, and a reason on an
 * approval (the model reads a reason only for a rejection). Empty when it fits.
 */
export function shapeProblems(value: unknown, shape: Shape): string[] {
  const fields = Object.keys(shape);
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return [`must be an object { ${fields.join(', ')} }; got ${kindOf(value)}`];
  }
  const given = value as Readonly<Record<string, unknown>>;
  const problems: string[] = [];
  for (const key of Object.keys(given)) {
    if (Object.hasOwn(shape, key)) continue;
    const near = nearestName(key, fields);
    problems.push(
      `\`${key}\` is not one of its fields${near ? `; did you mean \`${near}\`?` : ''}`,
    );
  }
  for (const [key, spec] of Object.entries(shape)) {
    const field = given[key];
    if (field === undefined) {
      if (spec.required) problems.push(`\`${key}\` is missing (a ${spec.type})`);
      continue;
    }
    if (typeof field !== spec.type) {
      problems.push(`\`${key}\` must be a ${spec.type}; got ${kindOf(field)}`);
    } else if (key === 'callId' && field === '') {
      problems.push('`callId` must not be empty');
    }
  }
  if (given.approved === true && given.reason !== undefined) {
    problems.push('`reason` is for a rejection only (approved: false): the model reads it then');
  }
  return problems;
}

/** Throws an InputError naming every problem of `value` against `shape`; `what` says where. */
export function checkShape(value: unknown, shape: Shape, what: string): void {
  const problems = shapeProblems(value, shape);
  if (problems.length > 0) throw new InputError(`${what}: ${problems.join('; ')}`);
}

/** A run or call id given to `approvals(store)`: a non-empty string, else an InputError. */
export function checkId(value: unknown, name: 'runId' | 'callId', what: string): void {
  if (typeof value !== 'string' || value === '') {
    throw new InputError(`${what}: \`${name}\` must be a non-empty string; got ${kindOf(value)}`);
  }
}

/** How a value of the wrong type is shown: its kind, never its content (it may be huge). */
export function kindOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'string') return value === '' ? 'an empty string' : 'a string';
  return `a ${typeof value}`;
}
