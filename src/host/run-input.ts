import { attachmentProblem } from '../attachments.js';
import { InputError } from '../errors.js';
import { isRecord } from '../is-record.js';
import type { Message } from '../messages.js';

// What chains take as a run's input, checked where it enters: a wrong shape is an InputError
// naming the expected one, not a TypeError from deep inside the machine (issue 13, defect 9).

const ROLES = ['system', 'user', 'assistant', 'tool'] as const;

export const RUN_INPUT_SHAPE =
  "a string, or { messages: Message[], intermediateResults?: object } (a Message is { role: 'system' | 'user' | 'assistant', content: string, … } or a tool result)";

/** `value` as the messages and cached results of a run; `where` names the call, e.g. `chain.invoke`. */
export function checkedRunInput(
  value: unknown,
  where: string,
): {
  readonly messages: readonly Message[];
  readonly intermediateResults?: Readonly<Record<string, unknown>>;
} {
  if (!isRecord(value))
    throw new InputError(`${where}: input must be ${RUN_INPUT_SHAPE}; got ${describe(value)}`);
  const { messages, intermediateResults } = value;
  if (!Array.isArray(messages)) {
    throw new InputError(
      `${where}: input.messages must be an array of messages; got ${describe(messages)}`,
    );
  }
  for (const [index, message] of messages.entries()) {
    checkMessage(message, `${where}: input.messages[${index}]`);
  }
  if (intermediateResults !== undefined && !isRecord(intermediateResults)) {
    throw new InputError(
      `${where}: input.intermediateResults must be an object of earlier chains' results; got ${describe(intermediateResults)}`,
    );
  }
  return value as { messages: readonly Message[]; intermediateResults?: Record<string, unknown> };
}

function checkMessage(message: unknown, at: string): void {
  if (!isRecord(message) || !ROLES.includes(message.role as (typeof ROLES)[number])) {
    throw new InputError(
      `${at} is not a message: expected { role: 'system' | 'user' | 'assistant', content: string, … } or { role: 'tool', toolCallId, name, output, success }; got ${describe(message)}`,
    );
  }
  if (message.role !== 'tool' && typeof message.content !== 'string') {
    throw new InputError(`${at}.content must be a string; got ${describe(message.content)}`);
  }
  if ((message.role === 'user' || message.role === 'tool') && message.attachments !== undefined) {
    checkAttachments(message.attachments, `${at}.attachments`);
  }
  if (message.role === 'assistant') {
    if (!Array.isArray(message.toolCalls)) {
      throw new InputError(
        `${at}.toolCalls must be an array (empty when the message calls no tool; assistantMessage() makes one); got ${describe(message.toolCalls)}`,
      );
    }
    for (const [index, call] of message.toolCalls.entries()) {
      if (!isRecord(call) || typeof call.id !== 'string' || typeof call.name !== 'string') {
        throw new InputError(
          `${at}.toolCalls[${index}] must be { id: string, name: string, arguments }; got ${describe(call)}`,
        );
      }
    }
  }
  if (
    message.role === 'tool' &&
    (typeof message.toolCallId !== 'string' || typeof message.success !== 'boolean')
  ) {
    throw new InputError(
      `${at} is a tool result without toolCallId (string) and success (boolean); toolResultMessage() makes one`,
    );
  }
}

function checkAttachments(attachments: unknown, at: string): void {
  if (!Array.isArray(attachments))
    throw new InputError(
      `${at} must be an array of attachment() values; got ${describe(attachments)}`,
    );
  for (const [index, item] of attachments.entries()) {
    const problem = attachmentProblem(item);
    if (problem) throw new InputError(`${at}[${index}] ${problem}; attachment() makes one`);
  }
}

/** A short description of a wrong value: its type, and a clipped preview. */
function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return `an array of ${value.length}`;
  if (typeof value === 'string') return `the string ${JSON.stringify(value.slice(0, 40))}`;
  if (typeof value === 'object')
    return `an object with keys ${JSON.stringify(Object.keys(value).slice(0, 8))}`;
  return `${typeof value} ${String(value).slice(0, 40)}`;
}
