import { type Describes, describeOptions } from '../../options/describe.js';
import { satisfies } from '../../options/kinds.js';
import { OptionProblems } from '../../options/problems.js';
import { DEFAULT_STORE_TIMEOUT_MS } from '../bounded.js';
import { DEFAULT_MAX_ENTRY_BYTES } from './entry-line.js';

/** What `fileStore(dir, options)` and `memoryStore(options)` take. */
export interface StoreOptions {
  /**
   * Milliseconds one operation of the store (an append, a read, a listing) may take before it
   * fails with a JournalError `timed-out`, so that a stalled disk ends the run, typed and
   * resumable, instead of hanging it. Default 30,000.
   */
  readonly timeoutMs?: number;
  /**
   * The largest entry the store keeps, in bytes of JSON: a larger one (a huge tool result) is
   * refused with a JournalError `too-large` before anything is written. Default 64 MiB.
   */
  readonly maxEntryBytes?: number;
}

/** Largest setTimeout delay Node.js honours; a longer one fires at once. */
const MAX_TIMER_MS = 2_147_483_647;
/** Past this a line cannot be read back as one string (V8 strings stop at 512 MiB). */
const MAX_ENTRY_BYTES_LIMIT = 256 * 1024 * 1024;

/**
 * The store options described once (see src/options/describe.ts): their checks, in the order
 * problems are reported, and their defaults. fileStore and memoryStore check them into
 * problems of their own, which name the function.
 */
export const STORE_OPTIONS = describeOptions('memoryStore', {
  timeoutMs: satisfies<number, number>(
    (value) => typeof value === 'number' && value > 0 && value <= MAX_TIMER_MS,
    (value) =>
      `must be a number of milliseconds above 0 (at most ${MAX_TIMER_MS}); got ${String(value)}`,
    { default: DEFAULT_STORE_TIMEOUT_MS },
  ),
  maxEntryBytes: satisfies<number, number>(
    (value) =>
      Number.isInteger(value) &&
      (value as number) >= 1_024 &&
      (value as number) <= MAX_ENTRY_BYTES_LIMIT,
    (value) =>
      `must be a whole number of bytes from 1024 to ${MAX_ENTRY_BYTES_LIMIT} (256 MiB); got ${String(value)}`,
    { default: DEFAULT_MAX_ENTRY_BYTES, defaultText: '64 MiB' },
  ),
});

// tsc fails here, naming the option, when StoreOptions and its description drift apart.
const _described: Describes<StoreOptions, typeof STORE_OPTIONS> = true;

/** The options checked whole (every problem at once), with their defaults filled in. */
export function checkStoreOptions(
  where: string,
  options: unknown,
  problems = new OptionProblems(where),
): Required<StoreOptions> {
  if (options === undefined) {
    problems.throwIfAny();
    return STORE_OPTIONS.defaults;
  }
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    problems.add('options', `must be an object { timeoutMs?, maxEntryBytes? }`);
    problems.throwIfAny();
  }
  const checked = STORE_OPTIONS.collect(options as object, problems);
  problems.throwIfAny();
  return checked;
}
