import { AttachmentBytes } from '../durable/attachment-bytes.js';
import { encode } from '../durable/codec.js';
import type { JsonValue } from '../viz/to-json.js';

/**
 * How a run ended, as it crosses from the worker to a client: the agent's result, or its
 * error, each codec-encoded, so the client gets back a Transcript as a Transcript and an
 * error as its typed class with its partial result. A result's `details()` (SPEC A5) is data
 * computed on demand: it goes as its value, and comes back as a method.
 */
export type RunOutcome =
  | {
      readonly ok: true;
      readonly output: JsonValue;
      readonly details?: JsonValue;
      readonly attachments?: AttachmentTable;
    }
  | { readonly ok: false; readonly error: JsonValue; readonly attachments?: AttachmentTable };

/**
 * The base64 bytes of the outcome's attachments by sha256, which its output, details and error
 * refer to (codec.ts's `attachment` tag): `details()` holds every model call's messages whole,
 * so one screenshot is in the transcript and in each call after it, but crosses once.
 */
type AttachmentTable = Readonly<Record<string, string>>;

/** An outcome sealed with the deployment's secret (sealing.ts): what `run` returns then. */
export interface SealedOutcome {
  readonly sealed: string;
}

/** The outcome of a run that returned `output`. Throws JournalCodecError for what JSON cannot hold. */
export function succeeded(output: unknown): RunOutcome {
  const bytes = new AttachmentBytes();
  const encoded = (value: unknown) => encode(value, { attachmentRef: (data) => bytes.ref(data) });
  const details = (output as { details?: unknown } | null)?.details;
  if (typeof details !== 'function') {
    return { ok: true, output: encoded(output), ...withTable(bytes) };
  }
  const { details: _method, ...rest } = output as { details: () => unknown };
  return {
    ok: true,
    output: encoded(rest),
    details: encoded(details.call(output)),
    ...withTable(bytes),
  };
}

export function failed(error: unknown): RunOutcome {
  const bytes = new AttachmentBytes();
  const encoded = encode(error, { attachmentRef: (data) => bytes.ref(data) });
  return { ok: false, error: encoded, ...withTable(bytes) };
}

/** `{ attachments }` when the outcome held any; nothing otherwise. */
function withTable(bytes: AttachmentBytes): { attachments?: AttachmentTable } {
  const table = bytes.takeTable();
  return Object.keys(table).length > 0 ? { attachments: table } : {};
}

/** What the run returned, as the agent's `invoke` returned it; a failed run throws its error. */
export function settle<T>(outcome: RunOutcome): T {
  // An outcome without a table (from a worker before tables) holds its bytes inline.
  const bytes = AttachmentBytes.ofTable(outcome.attachments);
  if (!outcome.ok) throw bytes.decode(outcome.error);
  const output = bytes.decode(outcome.output);
  if (outcome.details === undefined || typeof output !== 'object' || output === null) {
    return output as T;
  }
  const details = bytes.decode(outcome.details);
  return { ...output, details: () => details } as T;
}
