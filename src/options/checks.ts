import { ConfigError } from '../errors.js';
import type { LanguageModel } from '../model/language-model.js';

// Checks shared by every runtime's options: each throws a ConfigError naming the option. The
// kinds of ./kinds.ts wrap them, so a described option is refused in the same words.

/** A name for callbacks and stream events: a non-empty string, or `fallback`. */
export function runName(option: string, value: unknown, fallback: string): string {
  if (value === undefined) return fallback;
  if (typeof value !== 'string' || value.trim() === '') {
    throw new ConfigError(option, `must be a non-empty string; got ${JSON.stringify(value)}`);
  }
  return value;
}

/** An integer >= `min`, or `fallback` when not given. */
export function integerAtLeast(
  option: string,
  value: unknown,
  min: number,
  fallback: number,
): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min) {
    throw new ConfigError(option, `must be an integer >= ${min}; got ${String(value)}`);
  }
  return value;
}

/** A count: an integer >= 0, or `Infinity` for no limit; `fallback` when not given. */
export function countOrInfinity<F extends number | undefined>(
  option: string,
  value: unknown,
  fallback: F,
): number | F {
  if (value === undefined) return fallback;
  if (
    typeof value !== 'number' ||
    !(value === Number.POSITIVE_INFINITY || (Number.isInteger(value) && value >= 0))
  ) {
    throw new ConfigError(
      option,
      `must be an integer >= 0, or Infinity for no limit; got ${String(value)}`,
    );
  }
  return value;
}

/** A finite number > 0 (an integer when `integer`), or undefined when not given. */
export function optionalPositive(
  option: string,
  value: unknown,
  integer: boolean,
): number | undefined {
  if (value === undefined) return undefined;
  if (
    typeof value !== 'number' ||
    !(value > 0) ||
    !Number.isFinite(value) ||
    (integer && !Number.isInteger(value))
  ) {
    throw new ConfigError(
      option,
      `must be ${integer ? 'an integer' : 'a finite number'} > 0; got ${String(value)}`,
    );
  }
  return value;
}

/** The longest delay a timer can wait: longer ones fire at once (Node clamps them to 1 ms). */
export const MAX_DELAY_MS = 2_147_483_647;

/** Milliseconds > 0 a timer can wait, or undefined when not given. */
export function optionalDelay(option: string, value: unknown): number | undefined {
  const ms = optionalPositive(option, value, false);
  if (ms !== undefined && ms > MAX_DELAY_MS) {
    throw new ConfigError(
      option,
      `must be at most ${MAX_DELAY_MS} ms (about 24.8 days), the longest a timer can wait; got ${ms}`,
    );
  }
  return ms;
}

/**
 * A run's time limit in milliseconds, or undefined when not given: from 0 (LangChain's
 * AgentExecutor checks the time before the first step, so 0 stops a run before it starts) to
 * the longest a timer can wait.
 */
export function optionalTimeLimit(option: string, value: unknown): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'number' || !(value >= 0) || !Number.isFinite(value)) {
    throw new ConfigError(
      option,
      `must be a finite number >= 0 of milliseconds (0 stops the run before its first model call); got ${String(value)}`,
    );
  }
  if (value === 0) return 0; // -0 too
  return optionalDelay(option, value);
}

/** A LanguageModel of the interface version this runtime speaks. */
export function checkModel(option: string, model: unknown): asserts model is LanguageModel {
  const candidate = model as Partial<LanguageModel> | null | undefined;
  if (
    !candidate ||
    typeof candidate.generate !== 'function' ||
    typeof candidate.stream !== 'function'
  ) {
    throw new ConfigError(
      option,
      'must be a LanguageModel (generate and stream), e.g. new ScriptedModel([...])',
    );
  }
  if (candidate.specificationVersion !== 'v1') {
    throw new ConfigError(
      option,
      `implements LanguageModel ${String(candidate.specificationVersion)}; this runtime needs v1`,
    );
  }
}
