import type { Attachment } from '../attachments.js';
import { assistantMessage, type Message, type ToolCall, type ToolResult } from '../messages.js';

/**
 * A change to the transcript, produced by a runtime side effect (a model response, a tool
 * result, a summary…) and applied only at the turn boundary by `reduceTurnContext`. Every
 * mutation is plain JSON, so a run's mutation log can be stored, inspected and replayed.
 */
export type ContextMutation =
  | AssistantMessageMutation
  | ToolResultMutation
  | UserMessageMutation
  | SystemNoteMutation
  | ContextReplaceMutation
  | ContextSummaryMutation
  | ExperienceRememberMutation
  | ExperienceForgetMutation
  | AssistantTruncatedMutation
  | ToolCancelledMutation;

/** The model's answer: text and the tool calls it asked for (ids already assigned). */
export interface AssistantMessageMutation {
  readonly type: 'assistantMessage';
  readonly content: string;
  readonly toolCalls: readonly ToolCall[];
}

/** One tool's answer to a pending call. */
export interface ToolResultMutation {
  readonly type: 'toolResult';
  readonly result: ToolResult;
}

export interface UserMessageMutation {
  readonly type: 'userMessage';
  readonly content: string;
  /** Images and files sent with it (`attachment()`); absent when none. */
  readonly attachments?: readonly Attachment[];
}

/**
 * A system message added mid-conversation (a limit warning, a correction, a tool note). It
 * never replaces the leading system prompt, which convertToLlmRequest owns.
 */
export interface SystemNoteMutation {
  readonly type: 'systemNote';
  readonly content: string;
}

/** Replaces the whole transcript (checked for tool linkage like any other change). */
export interface ContextReplaceMutation {
  readonly type: 'contextReplace';
  readonly messages: readonly Message[];
}

/**
 * Compacts the transcript into a summary: a leading system message is kept, everything else
 * becomes the summary message; `remember` items are stored as experiences. A string summary
 * becomes a user message `<conversation_summary>…</conversation_summary>`; a message (any
 * role, as the seed's `summary_message`) is kept as it is, for a summary the model should read
 * as its own words or as a system note.
 */
export interface ContextSummaryMutation {
  readonly type: 'contextSummary';
  readonly summary: string | Message;
  readonly remember?: readonly string[];
}

/** Stores an experience in the self-reference snapshot (batched; see reduceTurnContext). */
export interface ExperienceRememberMutation {
  readonly type: 'experienceRemember';
  readonly text: string;
}

/** Removes the experience with this id (batched; forgetting an unknown id does nothing). */
export interface ExperienceForgetMutation {
  readonly type: 'experienceForget';
  readonly id: number;
}

/**
 * The model's output was cut off (a cancel, an interrupted stream): the partial text is kept
 * as an assistant message marked `truncated` (with `truncatedReason`), and its incomplete tool
 * calls are dropped. Providers are sent the text followed by the seed's marker
 * `<Truncated due to cancel from user. Reason: …>` (truncation-marker.ts).
 */
export interface AssistantTruncatedMutation {
  readonly type: 'assistantTruncated';
  readonly content: string;
  readonly reason?: string;
}

/**
 * A tool call that will not run (abort, timeout, a limit): answered with a failed result.
 * When the call is not in the transcript yet (a runtime that records a step's calls only with
 * their results, as the seed does), the assistant call itself is added first, so the result
 * always answers a call. `toolName` is what that call, and the result, are named.
 */
export interface ToolCancelledMutation {
  readonly type: 'toolCancelled';
  readonly toolCallId: string;
  readonly toolName: string;
  readonly reason?: string;
}

export type ExperienceMutation = ExperienceRememberMutation | ExperienceForgetMutation;

export function isExperienceMutation(mutation: ContextMutation): mutation is ExperienceMutation {
  return mutation.type === 'experienceRemember' || mutation.type === 'experienceForget';
}

/**
 * Constructors for every mutation. Tool call ids are generated here, not when the mutation is
 * applied, so replaying a log yields the same transcript.
 */
export const mutate = {
  assistantMessage(
    content: string,
    toolCalls: readonly (Omit<ToolCall, 'id'> & { readonly id?: string })[] = [],
  ): AssistantMessageMutation {
    return {
      type: 'assistantMessage',
      content,
      toolCalls: assistantMessage(content, toolCalls).toolCalls,
    };
  },
  toolResult(result: ToolResult): ToolResultMutation {
    return { type: 'toolResult', result };
  },
  userMessage(content: string, attachments?: readonly Attachment[]): UserMessageMutation {
    return attachments?.length
      ? { type: 'userMessage', content, attachments }
      : { type: 'userMessage', content };
  },
  systemNote(content: string): SystemNoteMutation {
    return { type: 'systemNote', content };
  },
  contextReplace(messages: Iterable<Message>): ContextReplaceMutation {
    return { type: 'contextReplace', messages: Array.from(messages) };
  },
  contextSummary(
    summary: string | Message,
    remember: readonly string[] = [],
  ): ContextSummaryMutation {
    return remember.length
      ? { type: 'contextSummary', summary, remember }
      : { type: 'contextSummary', summary };
  },
  experienceRemember(text: string): ExperienceRememberMutation {
    return { type: 'experienceRemember', text };
  },
  experienceForget(id: number): ExperienceForgetMutation {
    return { type: 'experienceForget', id };
  },
  assistantTruncated(content: string, reason?: string): AssistantTruncatedMutation {
    return reason === undefined
      ? { type: 'assistantTruncated', content }
      : { type: 'assistantTruncated', content, reason };
  },
  toolCancelled(toolCallId: string, toolName: string, reason?: string): ToolCancelledMutation {
    return reason === undefined
      ? { type: 'toolCancelled', toolCallId, toolName }
      : { type: 'toolCancelled', toolCallId, toolName, reason };
  },
} as const;
