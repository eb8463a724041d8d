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

export const STORE_OPTION_KEYS = ['timeoutMs', 'maxEntryBytes'] as const;

/** Largest setTimeout delay Node.js honours; a longer one fires at once. */
const MAX_TIMER_MS = 2_147_483_647;
/** Past this a line cannot be read back as one string (V8 strings stop at 512 MiB). */
const MAX_ENTRY_BYTES_LIMIT = 256 * 1024 * 1024;

/** The options checked whole (every problem at once), with their defaults filled in. */
export function checkStoreOptions(
  where: string,
  options: unknown,
  problems = new OptionProblems(where),
): Required<StoreOptions> {
  if (options === undefined) {
    problems.throwIfAny();
    return { timeoutMs: DEFAULT_STORE_TIMEOUT_MS, maxEntryBytes: DEFAULT_MAX_ENTRY_BYTES };
  }
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    problems.add('options', `must be an object { timeoutMs?, maxEntryBytes? }`);
    problems.throwIfAny();
  }
  const given = options as Readonly<Record<string, unknown>>;
  problems.unknownKeys(given, STORE_OPTION_KEYS);
  const { timeoutMs = DEFAULT_STORE_TIMEOUT_MS, maxEntryBytes = DEFAULT_MAX_ENTRY_BYTES } = given;
  if (typeof timeoutMs !== 'number' || !(timeoutMs > 0 && timeoutMs <= MAX_TIMER_MS)) {
    problems.add(
      'timeoutMs',
      `must be a number of milliseconds above 0 (at most ${MAX_TIMER_MS}); got ${String(timeoutMs)}`,
    );
  }
  if (
    !Number.isInteger(maxEntryBytes) ||
    (maxEntryBytes as number) < 1_024 ||
    (maxEntryBytes as number) > MAX_ENTRY_BYTES_LIMIT
  ) {
    problems.add(
      'maxEntryBytes',
      `must be a whole number of bytes from 1024 to ${MAX_ENTRY_BYTES_LIMIT} (256 MiB); got ${String(maxEntryBytes)}`,
    );
  }
  problems.throwIfAny();
  return { timeoutMs: timeoutMs as number, maxEntryBytes: maxEntryBytes as number };
}
