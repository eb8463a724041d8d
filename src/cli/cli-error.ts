// What the CLI reports as a plain message with exit code 1: bad input the user can fix. Any
// other error is a bug or a failing module and is reported the same way, but says where.

/** A mistake in the command line or in what it points at; its message is the whole report. */
export class CliError extends Error {
  override readonly name = 'CliError';
}

/**
 * The stacks STATECRAFT_DEBUG=1 shows for an error: a CliError's own is the CLI's, so from
 * its cause (the exception a user's module or script threw); any other error's own. Then each
 * cause's, down the chain (a ModelError's is the provider SDK's error, and that one's the
 * network's), each under `Caused by:`.
 */
export function debugStack(error: unknown): string | undefined {
  const stacks: string[] = [];
  let shown = error instanceof CliError ? error.cause : error;
  for (let depth = 0; shown instanceof Error && depth < 8; depth++) {
    stacks.push(shown.stack ?? `${shown.name}: ${shown.message}`);
    shown = shown.cause;
  }
  return stacks.length > 0 ? stacks.join('\nCaused by: ') : undefined;
}
