import type { AnyStateMachine } from 'xstate';

// The export functions take any value a user (or the CLI) hands them: what is not a machine
// gets an error that says what it is instead.

/** Throws a clear error when `value` is not an XState v5 machine. */
export function assertMachine(value: unknown, caller: string): asserts value is AnyStateMachine {
  const root = (value as { root?: { states?: unknown; transitions?: unknown } } | null)?.root;
  if (!root || typeof root.states !== 'object' || !(root.transitions instanceof Map)) {
    throw new TypeError(
      `${caller}: \`machine\` must be an XState v5 state machine (createMachine or setup().createMachine), got ${describe(value)}`,
    );
  }
}

/** A value's kind, for error messages: `a plain object`, `an instance of Chain`, `number 3`. */
export function describe(value: unknown): string {
  if (value === null || value === undefined) return String(value);
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'function') return `a function${value.name ? ` (${value.name})` : ''}`;
  if (typeof value === 'object') {
    const name = (value as object).constructor?.name;
    return name && name !== 'Object' ? `an instance of ${name}` : 'a plain object';
  }
  return typeof value === 'string'
    ? `string ${JSON.stringify(value)}`
    : `${typeof value} ${String(value)}`;
}
