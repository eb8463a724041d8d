import { type Message, systemMessage, userMessage } from '../messages.js';
import type { Convergence } from '../plan/converge.js';

/**
 * The final response's conversation (SPEC T8): optional instructions, the user's request, and,
 * when tools ran, a system note with the action results as JSON and the instruction to quote
 * them. Without records nothing is injected.
 */
export function responseMessages(
  userInput: string,
  extraRequirement: string,
  convergence: Convergence | undefined,
  instructions?: string,
): Message[] {
  const messages: Message[] = [];
  if (instructions) messages.push(systemMessage(instructions));
  messages.push(
    userMessage(extraRequirement ? `${userInput}\n\nRequirement: ${extraRequirement}` : userInput),
  );
  if (convergence) {
    messages.push(
      systemMessage(
        `Action results (JSON, keyed by the purpose of each tool call):\n${JSON.stringify(convergence.actionResults, null, 2)}\n\n${convergence.extraInstruction}`,
      ),
    );
    // The tools' images and files: a user message carries them (every provider takes
    // attachments there), naming the key of the result each came with.
    const attached = convergence.attachments ?? [];
    if (attached.length > 0) {
      const lines = attached.map(
        ({ key, attachments }) =>
          `[${key}]: ${attachments.map((a) => a.name ?? a.mediaType).join(', ')}`,
      );
      messages.push(
        userMessage(
          `The action results came with these attachments, in this order:\n${lines.join('\n')}`,
          attached.flatMap(({ attachments }) => attachments),
        ),
      );
    }
  }
  return messages;
}
