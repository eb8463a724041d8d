import { JournalError, type JournalErrorReason } from '../journal-error.js';

// What a failing file system call becomes: a JournalError whose reason says what went wrong
// in words a caller can act on (free space, fix permissions), never a bare `Error: ENOSPC`.
// A JournalError already typed (a corrupt line, a busy run) passes through unchanged.

const REASON_OF_CODE: Readonly<Record<string, JournalErrorReason>> = {
  ENOSPC: 'no-space',
  EDQUOT: 'no-space',
  EFBIG: 'too-large',
  EACCES: 'no-permission',
  EPERM: 'no-permission',
  EROFS: 'no-permission',
};

const WHAT_TO_DO: Readonly<Partial<Record<JournalErrorReason, string>>> = {
  'no-space': 'the disk (or quota) is full: free space, then resume the run',
  'no-permission': 'the store may not write there: fix the permissions, then resume the run',
  'too-large': 'the file system refused a file that large',
};

/** `error`, thrown while `doing` (e.g. `appending a "result" entry`) on `file`, as a JournalError. */
export function storeFault(
  error: unknown,
  doing: string,
  where: { readonly runId?: string; readonly file?: string },
): JournalError {
  if (JournalError.isInstance(error)) return error;
  const code = codeOf(error);
  const reason = (code !== undefined && REASON_OF_CODE[code]) || 'store-failed';
  const detail = WHAT_TO_DO[reason] ?? (error instanceof Error ? error.message : String(error));
  const target = where.file ?? (where.runId !== undefined ? `run '${where.runId}'` : 'the store');
  return new JournalError(
    reason,
    `The journal store failed ${doing} (${target}${code ? `, ${code}` : ''}): ${detail}`,
    {
      cause: error,
      ...(where.runId !== undefined && { runId: where.runId }),
      ...(where.file !== undefined && { file: where.file }),
    },
  );
}

/** The `code` of a Node.js system error (`ENOSPC`…), if it has one. */
export function codeOf(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

export function hasCode(error: unknown, code: string): boolean {
  return codeOf(error) === code;
}
