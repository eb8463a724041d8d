import { decode, encode } from '../durable/codec.js';
import type { JsonValue } from '../viz/to-json.js';

/**
 * How a run ended, as it crosses from the worker to a client: the agent's result, or its
 * error, each codec-encoded, so the client gets back a Transcript as a Transcript and an
 * error as its typed class with its partial result. A result's `details()` (SPEC A5) is data
 * computed on demand: it goes as its value, and comes back as a method.
 */
export type RunOutcome =
  | { readonly ok: true; readonly output: JsonValue; readonly details?: JsonValue }
  | { readonly ok: false; readonly error: JsonValue };

/** An outcome sealed with the deployment's secret (sealing.ts): what `run` returns then. */
export interface SealedOutcome {
  readonly sealed: string;
}

/** The outcome of a run that returned `output`. Throws JournalCodecError for what JSON cannot hold. */
export function succeeded(output: unknown): RunOutcome {
  const details = (output as { details?: unknown } | null)?.details;
  if (typeof details !== 'function') return { ok: true, output: encode(output) };
  const { details: _method, ...rest } = output as { details: () => unknown };
  return { ok: true, output: encode(rest), details: encode(details.call(output)) };
}

export function failed(error: unknown): RunOutcome {
  return { ok: false, error: encode(error) };
}

/** What the run returned, as the agent's `invoke` returned it; a failed run throws its error. */
export function settle<T>(outcome: RunOutcome): T {
  if (!outcome.ok) throw decode(outcome.error);
  const output = decode(outcome.output);
  if (outcome.details === undefined || typeof output !== 'object' || output === null) {
    return output as T;
  }
  const details = decode(outcome.details);
  return { ...output, details: () => details } as T;
}
