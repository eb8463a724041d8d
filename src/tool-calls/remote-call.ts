import { type Attachment, attachmentProblem } from '../attachments.js';
import { isAsyncIterable } from '../host/async-iterable.js';
import { jsonSafeOutput } from '../json-safe.js';
import { failedToolResult, type ToolCall, type ToolResult } from '../messages.js';
import { ABORTED, raceAbort } from '../race-abort.js';
import type { RemoteToolExecutor } from '../tools/remote-executor.js';

/** What `callRemote` answers when the remote resolved with something that is not a ToolResult. */
export const NO_RETURN: unique symbol = Symbol('no return');

/**
 * One call on a remote tool executor (SPEC C10), as a ToolResult the run can carry: the
 * remote's exception or a cancellation is a failed result, its output is made JSON-safe (a
 * custom executor may hand back BigInts or cycles), and its result answers `call` whatever
 * ids it echoes. `NO_RETURN` when it gave no result, so the caller can fall back to the
 * local registry. Never throws.
 */
export async function callRemote(
  remote: RemoteToolExecutor,
  call: ToolCall,
  signal: AbortSignal,
  idempotencyKey?: string,
): Promise<ToolResult | typeof NO_RETURN> {
  const fail = (error: string) => failedToolResult(call, error);
  try {
    // Raced against the signal: a remote that ignores it must not hold the run.
    const result: unknown = await raceAbort(
      Promise.resolve().then(() =>
        remote.execute(call, {
          signal,
          ...(idempotencyKey !== undefined && { idempotencyKey }),
        }),
      ),
      signal,
    );
    if (result === ABORTED) return fail(`Tool '${call.name}' was cancelled.`);
    if (!isToolResult(result)) return NO_RETURN;
    const { output, success, error } = result;
    const attachments = checkedAttachments((result as { attachments?: unknown }).attachments);
    if (typeof attachments === 'string')
      return fail(`Tool '${call.name}' on ${remote.name} returned ${attachments}`);
    // Only a ToolResult's own fields: anything else a remote adds would ride along unchecked.
    return {
      toolCallId: call.id,
      name: call.name,
      // A stream's chunks are made safe as they are read.
      output: isAsyncIterable(output) ? output : jsonSafeOutput(output),
      success,
      ...(error !== undefined && { error: errorText(error) }),
      ...(attachments.length > 0 && { attachments }),
    };
  } catch (error) {
    return fail(
      `Tool '${call.name}' failed on ${remote.name}: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
}

/**
 * A remote's attachments, checked as any JSON from outside is (attachmentProblem) and copied
 * to their own fields, or what is wrong with them: a result the run cannot send to the model
 * becomes a failed one the model reads, never a provider's 400 later.
 */
function checkedAttachments(value: unknown): readonly Attachment[] | string {
  if (value === undefined) return [];
  if (!Array.isArray(value)) return 'attachments that are not an array of attachments';
  const attachments: Attachment[] = [];
  for (const [index, item] of value.entries()) {
    const problem = attachmentProblem(item);
    if (problem) return `a malformed attachment: attachments[${index}] ${problem}`;
    const { mediaType, data, url, name } = item as Attachment;
    attachments.push(
      Object.freeze({
        mediaType,
        ...(data !== undefined && { data }),
        ...(url !== undefined && { url }),
        ...(name !== undefined && { name }),
      }),
    );
  }
  return attachments;
}

/** A remote's `error` as the text the model reads, whatever type it sent. */
function errorText(error: unknown): string {
  if (typeof error === 'string') return error;
  return JSON.stringify(jsonSafeOutput(error)) ?? String(error);
}

function isToolResult(value: unknown): value is ToolResult {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as { success?: unknown }).success === 'boolean'
  );
}
