import type { AssistantMessage } from '../messages.js';

// SPEC P1: a truncated assistant message (mutate.assistantTruncated) keeps only its partial
// text in the transcript, so a run's record says exactly what the model produced. The model,
// though, must be told that it stopped mid-answer, or it reads its own half sentence as a
// finished one. The seed (SimpleLLMFunc) appends this marker to the text; we append it where a
// transcript becomes a provider request, in every adapter's request mapping, through the one
// function below so that every provider reads the same words.

/** The seed's marker, word for word: `<Truncated due to cancel from user. Reason: …>`. */
export function truncationMarker(reason?: string): string {
  // An empty reason says nothing, as in the seed (`if abort_reason`).
  return reason
    ? `<Truncated due to cancel from user. Reason: ${reason}>`
    : '<Truncated due to cancel from user.>';
}

/**
 * The text a provider is sent for an assistant message: its content, followed by the
 * truncation marker when the message was cut off. No separator, as in the seed: the marker
 * sits exactly where the output stopped.
 */
export function assistantRequestText(message: AssistantMessage): string {
  return message.truncated
    ? message.content + truncationMarker(message.truncatedReason)
    : message.content;
}
