import { AttachmentBytes } from '../durable/attachment-bytes.js';
import { decode, encode } from '../durable/codec.js';
import type { JsonValue } from '../viz/to-json.js';

/**
 * How a run ended, as it crosses from the worker to a client: the agent's result, or its
 * error, each codec-encoded, so the client gets back a Transcript as a Transcript and an
 * error as its typed class with its partial result. A result's `details()` (SPEC A5) is data
 * computed on demand: it goes as its value, and comes back as a method.
 *
 * Attachments' bytes go once, in `attachments` (base64 by sha256), and the values refer to
 * them, as in the run's journal (attachment-bytes.ts): a result holds a screenshot in its
 * transcript, its tool results and every model request of its details, and Restate refuses
 * a segment's result over its message size limit (32 MiB by default), so with the bytes
 * inline a run that returned a 1.5 MB image three times never ended.
 */
export type RunOutcome =
  | {
      readonly ok: true;
      readonly output: JsonValue;
      readonly details?: JsonValue;
      readonly attachments?: Readonly<Record<string, string>>;
    }
  | {
      readonly ok: false;
      readonly error: JsonValue;
      readonly attachments?: Readonly<Record<string, string>>;
    };

/** An outcome sealed with the deployment's secret (sealing.ts): what `run` returns then. */
export interface SealedOutcome {
  readonly sealed: string;
}

/** Encodes values with each attachment payload kept aside once, then `attachments()` holds them. */
function encoderOnce() {
  const bytes = new AttachmentBytes();
  return {
    encode: (value: unknown) => encode(value, { attachmentRef: (data) => bytes.ref(data) }),
    attachments(): { attachments?: Record<string, string> } {
      const payloads = bytes.takeNew();
      if (payloads.length === 0) return {};
      return { attachments: Object.fromEntries(payloads.map((p) => [p.sha256, p.data])) };
    },
  };
}

/** The outcome of a run that returned `output`. Throws JournalCodecError for what JSON cannot hold. */
export function succeeded(output: unknown): RunOutcome {
  const once = encoderOnce();
  const details = (output as { details?: unknown } | null)?.details;
  if (typeof details !== 'function') {
    const encoded = once.encode(output);
    return { ok: true, output: encoded, ...once.attachments() };
  }
  const { details: _method, ...rest } = output as { details: () => unknown };
  const encoded = once.encode(rest);
  const encodedDetails = once.encode(details.call(output));
  return { ok: true, output: encoded, details: encodedDetails, ...once.attachments() };
}

export function failed(error: unknown): RunOutcome {
  const once = encoderOnce();
  const encoded = once.encode(error);
  return { ok: false, error: encoded, ...once.attachments() };
}

/** What the run returned, as the agent's `invoke` returned it; a failed run throws its error. */
export function settle<T>(outcome: RunOutcome): T {
  const { attachments } = outcome;
  const options = {
    attachmentData: (sha256: string) =>
      attachments !== undefined && Object.hasOwn(attachments, sha256)
        ? attachments[sha256]
        : undefined,
  };
  if (!outcome.ok) throw decode(outcome.error, options);
  const output = decode(outcome.output, options);
  if (outcome.details === undefined || typeof output !== 'object' || output === null) {
    return output as T;
  }
  const details = decode(outcome.details, options);
  return { ...output, details: () => details } as T;
}
