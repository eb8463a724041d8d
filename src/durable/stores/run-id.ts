import { JournalError } from '../journal-error.js';

// A run id becomes a file name in `fileStore`, so it must be one everywhere: ASCII letters,
// digits, `-`, `_` and `.`, starting with a letter or digit (which rules out `.`, `..`,
// hidden files and ids read as command-line flags), at most 128 characters (file names stop at
// 255 bytes). No `:`: Windows refuses it in file names, and keeping it out leaves the
// idempotency key `<runId>:<toolCallId>` splittable at its first colon. The memory store
// applies the same rule, so a run id that works in tests works on disk.
const RUN_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

export const RUN_ID_RULE =
  'a run id is 1 to 128 ASCII letters, digits, "-", "_" or ".", starting with a letter or digit';

export function isValidRunId(runId: unknown): runId is string {
  return typeof runId === 'string' && RUN_ID.test(runId);
}

/** Throws a `JournalError` (reason `invalid-run-id`) unless `runId` is a valid run id. */
export function assertValidRunId(runId: unknown): asserts runId is string {
  if (isValidRunId(runId)) return;
  const shown = typeof runId === 'string' ? JSON.stringify(runId) : `a ${typeof runId}`;
  throw new JournalError('invalid-run-id', `Invalid run id ${shown}: ${RUN_ID_RULE}`);
}
