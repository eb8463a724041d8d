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
  }
  return messages;
}
