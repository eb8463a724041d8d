// What the CLI reports as a plain message with exit code 1: bad input the user can fix. Any
// other error is a bug or a failing module and is reported the same way, but says where.

/** A mistake in the command line or in what it points at; its message is the whole report. */
export class CliError extends Error {
  override readonly name = 'CliError';
}

/**
 * The stack STATECRAFT_DEBUG=1 shows for an error: a CliError's own is the CLI's, so its
 * cause's (the exception a user's module or script threw); any other error's own.
 */
export function debugStack(error: unknown): string | undefined {
  const shown = error instanceof CliError ? error.cause : error;
  return shown instanceof Error ? shown.stack : undefined;
}
