import type { ValidationOutcome } from '../../machines/chain.js';
import { jsonCandidates } from '../structured/extract-json.js';
import type { StructuredOutput } from '../structured/output-schema.js';
import type { ChainOptions } from './options.js';

/**
 * How a chain checks an answer (its `validateResult` effect): against the output schema when
 * it has one, then with `options.validateResult`. A rejected answer gets the words of the
 * correction the machine sends back to the model.
 */
export function answerValidator<T>(
  structured: StructuredOutput | undefined,
  options: Pick<ChainOptions<T>, 'validateResult'>,
): (text: string) => Promise<ValidationOutcome> {
  return async (text) => {
    let value: unknown = text;
    if (structured) {
      // The first JSON value in the answer that passes the schema; else the first one's errors.
      let firstIssues: string[] | undefined;
      let found = false;
      for (const candidate of jsonCandidates(text)) {
        const checked = await structured.validate(candidate);
        if (checked.ok) {
          value = checked.value;
          found = true;
          break;
        }
        firstIssues ??= checked.issues;
      }
      if (!found && !firstIssues) {
        return {
          ok: false,
          message:
            'Your answer contains no JSON value. Answer with only the JSON value the schema describes.',
        };
      }
      if (!found) {
        return {
          ok: false,
          message: `Your JSON does not match the schema:\n${(firstIssues ?? []).map((i) => `- ${i}`).join('\n')}\nAnswer again with corrected JSON only.`,
        };
      }
    }
    if (options.validateResult) {
      const verdict = await options.validateResult(value as T);
      if (!verdict.ok) return { ok: false, message: verdict.message };
    }
    return { ok: true, value };
  };
}
