import { type Attachment, attachmentSize } from './attachments.js';
import type { Message } from './messages.js';

/**
 * An attachment as views of a run show it (details(), spans, the viewer): what it is and how
 * big, never its bytes. A URL attachment keeps its URL (it is short, and it is what was sent).
 */
export interface AttachmentSummary {
  readonly mediaType: string;
  readonly name?: string;
  /** Bytes of inline data; 0 for a URL. */
  readonly size: number;
  readonly url?: string;
}

export function summarizeAttachment(attachment: Attachment): AttachmentSummary {
  return {
    mediaType: attachment.mediaType,
    ...(attachment.name !== undefined && { name: attachment.name }),
    size: attachmentSize(attachment),
    ...(attachment.url !== undefined && { url: attachment.url }),
  };
}

/** The attachments of a user message or a tool result (none for other messages). */
export function attachmentsOf(message: Message): readonly Attachment[] {
  return (message.role === 'user' || message.role === 'tool') && message.attachments
    ? message.attachments
    : [];
}

/** How many attachments `messages` hold and their inline bytes: what spans report. */
export function attachmentTotals(messages: Iterable<Message>): {
  readonly count: number;
  readonly bytes: number;
} {
  let count = 0;
  let bytes = 0;
  for (const message of messages) {
    for (const attachment of attachmentsOf(message)) {
      count++;
      bytes += attachmentSize(attachment);
    }
  }
  return { count, bytes };
}
