import type { Message } from './messages.js';
import type { Usage } from './usage.js';

/**
 * What a fatal error keeps of the run it ended, so that nothing the run paid for is lost:
 * the transcript so far and the tokens spent.
 */
export interface PartialResult {
  readonly transcript: readonly Message[];
  readonly usage: Usage;
}

export interface StatecraftErrorOptions {
  readonly cause?: unknown;
  readonly partial?: PartialResult;
}

// A registry symbol, not a module-local one: two copies of statecraft in one process (a
// duplicated dependency) must still recognise each other's errors, which `instanceof` cannot.
const CODES = Symbol.for('statecraft.error.codes');

/**
 * Base of every error statecraft throws. `code` is stable across versions; use
 * `XxxError.isInstance(err)` rather than `instanceof`.
 */
export class StatecraftError extends Error {
  static readonly code: string = 'STATECRAFT_ERROR';
  readonly code: string;
  readonly partial: PartialResult | undefined;
  declare readonly [CODES]: readonly string[];

  constructor(message: string, options: StatecraftErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    const ctor = new.target as typeof StatecraftError;
    this.name = ctor.name;
    this.code = ctor.code;
    this.partial = options.partial;
    // Every class key along the chain, so `ModelError.isInstance` accepts its subclasses too.
    const codes: string[] = [];
    let c: unknown = ctor;
    while (typeof c === 'function' && 'code' in c) {
      codes.push(classKey(c as typeof StatecraftError));
      c = Object.getPrototypeOf(c);
    }
    Object.defineProperty(this, CODES, { value: Object.freeze(codes), enumerable: false });
  }

  /** True when `value` is this error class (or a subclass), even from another copy of the package. */
  static isInstance<T extends abstract new (...args: never[]) => StatecraftError>(
    this: T & { readonly code: string },
    value: unknown,
  ): value is InstanceType<T> {
    if (typeof value !== 'object' || value === null) return false;
    const codes = (value as { [CODES]?: unknown })[CODES];
    // biome-ignore lint/complexity/noThisInStatic: `this` is the subclass isInstance was called on.
    return Array.isArray(codes) && codes.includes(classKey(this));
  }
}

/**
 * What identifies an error class across package copies: its own `code`, or, for a subclass
 * that declares none (a user's `class MyError extends ModelError {}`), its code and name, so
 * that the parent's `isInstance` still accepts it but it does not accept its parent.
 */
function classKey(ctor: { readonly code: string; readonly name: string }): string {
  return Object.hasOwn(ctor, 'code') ? ctor.code : `${ctor.code}:${ctor.name}`;
}

/** One invalid option: which, and what is wrong with it. */
export interface OptionProblem {
  readonly option: string;
  readonly message: string;
}

/**
 * An option given at construction is invalid. Thrown at once, naming the option; when several
 * are wrong, `problems` lists every one (SPEC Q4) and `option` is the first.
 */
export class ConfigError extends StatecraftError {
  static override readonly code: string = 'CONFIG_ERROR';
  readonly option: string;
  readonly problems: readonly OptionProblem[];
  constructor(option: string, message: string, options?: StatecraftErrorOptions) {
    super(`Invalid option \`${option}\`: ${message}`, options);
    this.option = option;
    this.problems = Object.freeze([{ option, message }]);
  }

  /** One error for every problem found, `where` naming the factory (e.g. `createChain`). */
  static of(where: string, problems: readonly OptionProblem[]): ConfigError {
    const [first, ...rest] = problems;
    if (!first) throw new TypeError('ConfigError.of needs at least one problem');
    if (rest.length === 0) return new ConfigError(first.option, first.message);
    const error = new ConfigError(first.option, first.message);
    error.message = `${problems.length} invalid options for ${where}:\n${problems
      .map((p) => `- \`${p.option}\`: ${p.message}`)
      .join('\n')}`;
    Object.defineProperty(error, 'problems', { value: Object.freeze([...problems]) });
    return error;
  }
}

/**
 * What a run was given is not what it takes, e.g. `chain.invoke(123)`: thrown before anything
 * runs, naming the expected shape and what came instead.
 */
export class InputError extends StatecraftError {
  static override readonly code: string = 'INVALID_INPUT';
}

/** The run broke the agent protocol, e.g. it reached `maxIterations`. */
export class ProtocolError extends StatecraftError {
  static override readonly code: string = 'PROTOCOL_ERROR';
}

/** What a budget's error says of the call a run did not make (SPEC H3). */
export interface BudgetErrorOptions extends StatecraftErrorOptions {
  /** The next call's expected spend, when the run stopped before making it. */
  readonly estimate?: number;
  /** Replaces the default message. */
  readonly message?: string;
}

/**
 * The run spent more tokens than `maxTokens` allows, or its next model call would have
 * (`estimate` set: that call was not made, SPEC H3).
 */
export class TokenLimitError extends StatecraftError {
  static override readonly code: string = 'TOKEN_LIMIT';
  readonly limit: number;
  readonly used: number;
  /** The tokens the call that was not made was expected to spend; undefined after a call. */
  readonly estimate: number | undefined;
  constructor(limit: number, used: number, options: BudgetErrorOptions = {}) {
    const { estimate, message, ...rest } = options;
    super(message ?? `Token limit exceeded: used ${used} of ${limit} tokens`, rest);
    this.limit = limit;
    this.used = used;
    this.estimate = estimate;
  }
}

/**
 * The run spent more US dollars than `maxCost` allows, or its next model call would have
 * (`estimate` set: that call was not made). Priced with the chain's `prices` (SPEC H3).
 */
export class CostLimitError extends StatecraftError {
  static override readonly code: string = 'COST_LIMIT';
  /** US dollars. */
  readonly limit: number;
  /** US dollars spent by the run. */
  readonly spent: number;
  /** What the call that was not made was expected to cost; undefined after a call. */
  readonly estimate: number | undefined;
  constructor(limit: number, spent: number, options: BudgetErrorOptions = {}) {
    const { estimate, message, ...rest } = options;
    super(message ?? `Cost limit exceeded: spent $${spent} of $${limit}`, rest);
    this.limit = limit;
    this.spent = spent;
    this.estimate = estimate;
  }
}

/** The chain could not produce a valid result or could not end properly. */
export class ChainError extends StatecraftError {
  static override readonly code: string = 'CHAIN_ERROR';
}

/** A run outlived its `timeout`. What it finished before the deadline is in `partial`. */
export class TimeoutError extends StatecraftError {
  static override readonly code: string = 'TIMEOUT';
  readonly timeoutMs: number;
  constructor(timeoutMs: number, message: string, options?: StatecraftErrorOptions) {
    super(message, options);
    this.timeoutMs = timeoutMs;
  }
}

/** A transcript or mutation list breaks tool-call linkage or another structural rule. */
export class TranscriptError extends StatecraftError {
  static override readonly code: string = 'TRANSCRIPT_INVALID';
  /** Index in the transcript of the offending message. */
  readonly index: number;
  constructor(index: number, message: string, options?: StatecraftErrorOptions) {
    super(message, options);
    this.index = index;
  }
}

export interface ModelErrorOptions extends StatecraftErrorOptions {
  /** True when the same request may succeed later (rate limit, 5xx, network). */
  readonly retryable?: boolean;
  readonly status?: number;
}

/** The model provider failed (after the SDK's own retries, where it has them). */
export class ModelError extends StatecraftError {
  static override readonly code: string = 'MODEL_ERROR';
  readonly retryable: boolean;
  readonly status: number | undefined;
  constructor(message: string, options: ModelErrorOptions = {}) {
    super(message, options);
    this.retryable = options.retryable ?? false;
    this.status = options.status;
  }
}

/** The run was cancelled through its AbortSignal. */
export class AbortError extends StatecraftError {
  static override readonly code: string = 'ABORTED';
  readonly reason = 'cancelled' as const;
  constructor(message = 'The run was cancelled', options?: StatecraftErrorOptions) {
    super(message, options);
  }
}

/** Throws the signal's abort as an AbortError, keeping the signal's reason as the cause. */
export function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw new AbortError(undefined, { cause: signal.reason });
}
