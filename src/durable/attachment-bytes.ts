import { createHash } from '../lazy-crypto.js';
import { decode } from './codec.js';
import { isStartEntry, type JournalEntry, type StartEntry } from './journal-entry.js';
import { type AttachmentEntry, isAttachmentEntry } from './run-entries.js';

/**
 * The attachment payloads of one run's journal, by the sha256 of their base64: the codec
 * writes an `attachment` tag naming the hash instead of the bytes (codec.ts), and the bytes
 * go into the journal once, in the start entry (the run's input) or an `attachment` entry
 * before the first entry that refers to them. A screenshot sent in the input and returned by
 * a tool twice is on disk once, however many results, answers and transcripts hold it.
 */
export class AttachmentBytes {
  readonly #data = new Map<string, string>();
  /** Hashes of the payload strings met: hashing a large payload again costs as much as the first time. */
  readonly #hashes = new Map<string, string>();
  #new: AttachmentEntry[] = [];

  /** The payloads a journal holds: its start entry's and its attachment entries'. */
  static of(entries: readonly JournalEntry[]): AttachmentBytes {
    const start = entries[0];
    const bytes = AttachmentBytes.ofTable(
      start && isStartEntry(start) ? start.attachments : undefined,
    );
    for (const entry of entries)
      if (isAttachmentEntry(entry)) bytes.#data.set(entry.sha256, entry.data);
    return bytes;
  }

  /** The payloads of a `{ sha256: base64 }` table (`table`); anything else holds none. */
  static ofTable(table: unknown): AttachmentBytes {
    const bytes = new AttachmentBytes();
    if (typeof table === 'object' && table !== null) {
      for (const [sha256, data] of Object.entries(table))
        if (typeof data === 'string') bytes.#data.set(sha256, data);
    }
    return bytes;
  }

  /** The hash `data` is kept under; a payload not written yet is queued (takeNew). */
  ref(data: string): string {
    let sha256 = this.#hashes.get(data);
    if (sha256 === undefined) {
      sha256 = createHash('sha256').update(data).digest('hex');
      this.#hashes.set(data, sha256);
    }
    if (!this.#data.has(sha256)) {
      this.#data.set(sha256, data);
      this.#new.push({ type: 'attachment', sha256, data });
    }
    return sha256;
  }

  /** The payloads `ref` met since the last call, to write before the entry that refers to them. */
  takeNew(): AttachmentEntry[] {
    const taken = this.#new;
    this.#new = [];
    return taken;
  }

  /** The payloads `ref` met since the last call, as a `{ sha256: base64 }` table. */
  takeTable(): Record<string, string> {
    return Object.fromEntries(this.takeNew().map((p) => [p.sha256, p.data]));
  }

  decode(json: unknown): unknown {
    return decode(json, { attachmentData: (sha256) => this.#data.get(sha256) });
  }
}

/** A start entry's input, decoded with the attachment bytes the entry holds. */
export function inputOfStart(start: StartEntry): unknown {
  return AttachmentBytes.of([start]).decode(start.input);
}
