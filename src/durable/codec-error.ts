import { StatecraftError, type StatecraftErrorOptions } from '../errors.js';

/**
 * A value cannot cross the journal: encoding met something JSON cannot carry and the codec
 * will not guess at (a function, a symbol, a cycle, an instance of an unknown class), or
 * decoding met a tag it does not know (a journal from a newer version) or a malformed one.
 * `path` names the place in the value, e.g. `$.context.steps[2].x`, so the fix is findable.
 */
export class JournalCodecError extends StatecraftError {
  static override readonly code: string = 'JOURNAL_CODEC';
  /** Where in the value, from `$` (the value itself). */
  readonly path: string;
  constructor(path: string, message: string, options?: StatecraftErrorOptions) {
    super(message, options);
    this.path = path;
  }
}
