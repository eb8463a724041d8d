// Approvals through the UI message stream: the stream asks (`tool-approval-request`, read by
// ai's own reader into an `approval-requested` part), the browser answers (the part as the
// chat client posts it back, `approval-responded`), decideUIApprovals posts the answer on the
// durable run, and the run goes on: resumed from its store after it parked, or continued live
// in the same message (pauseOnApproval). Answers for another run, of another shape, on a call
// never asked about are refused; an answer given twice is ignored.

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readUIMessageStream, type UIMessage, uiMessageChunkSchema } from 'ai';
import {
  approvals,
  createChain,
  createToolLoop,
  defineTool,
  fileStore,
  InputError,
  JournalError,
  memoryStore,
} from 'statecraft';
import {
  decideUIApprovals,
  toUIMessageStream,
  type UIMessageChunk,
  uiApprovalResponses,
} from 'statecraft/ai-sdk';
import { ScriptedModel } from 'statecraft/testing';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';

async function collect(stream: ReadableStream<UIMessageChunk>): Promise<UIMessageChunk[]> {
  const chunks: UIMessageChunk[] = [];
  const reader = stream.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return chunks;
    // Every chunk as ai's own schema reads it.
    const parsed = await uiMessageChunkSchema().validate?.(value);
    if (!parsed?.success) throw new Error(`ai refused ${JSON.stringify(value)}`);
    chunks.push(value);
  }
}

async function fold(chunks: readonly UIMessageChunk[], message?: UIMessage): Promise<UIMessage> {
  const errors: unknown[] = [];
  let last: UIMessage | undefined;
  for await (const snapshot of readUIMessageStream({
    stream: new ReadableStream({
      start(controller) {
        for (const chunk of chunks) controller.enqueue(chunk);
        controller.close();
      },
    }) as never,
    ...(message !== undefined && { message: structuredClone(message) }),
    onError: (error) => errors.push(error),
  })) {
    last = snapshot;
  }
  expect(errors).toEqual([]);
  if (last === undefined) throw new Error('no message');
  return last;
}

type ToolPart = {
  type: string;
  toolCallId: string;
  state: string;
  approval?: { id: string; approved?: boolean; reason?: string };
};
const toolParts = (message: UIMessage) =>
  message.parts.filter((part) => part.type.startsWith('tool-')) as unknown as ToolPart[];

/** The assistant message as the chat client posts it after the person answered. */
function answered(message: UIMessage, approved: boolean, reason?: string): UIMessage {
  const copy = structuredClone(message);
  for (const part of toolParts(copy)) {
    if (part.state !== 'approval-requested' || part.approval === undefined) continue;
    part.state = 'approval-responded';
    part.approval = { id: part.approval.id, approved, ...(reason !== undefined && { reason }) };
  }
  return copy;
}

const user: UIMessage = {
  id: 'u1',
  role: 'user',
  parts: [{ type: 'text', text: 'Drop tmp_2024' }],
};

const dropTable = defineTool({
  name: 'drop_table',
  description: 'Drops a table.',
  input: z.object({ table: z.string() }),
  needsApproval: true,
  execute: ({ table }) => ({ dropped: table }),
});
function dropChain() {
  const model = new ScriptedModel(({ messages }) => {
    const last = messages.toArray().at(-1);
    if (last?.role === 'tool')
      return { text: last.success ? 'Dropped.' : `Not dropped: ${last.error}` };
    return { toolCalls: [{ id: 'c1', name: 'drop_table', arguments: { table: 'tmp_2024' } }] };
  });
  return createChain({ model, tools: [dropTable] });
}

describe('approvals in the browser', () => {
  it('asks in the stream, and a parked durable run resumes from a file store after the answer', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'statecraft-ui-'));
    try {
      const store = fileStore(dir);
      const chain = dropChain();
      const events = chain.stream('Drop tmp_2024', {
        runId: 'run-1',
        store,
        parkForApproval: true,
      });
      const chunks = await collect(toUIMessageStream(events, { runId: 'run-1', messageId: 'a1' }));
      expect(chunks).toContainEqual({
        type: 'tool-approval-request',
        approvalId: 'run-1:c1',
        toolCallId: 'c1',
      });
      expect(chunks.at(-1)).toEqual({ type: 'finish', finishReason: 'tool-calls' });
      const asked = await fold(chunks);
      expect(toolParts(asked)).toMatchObject([
        {
          type: 'tool-drop_table',
          toolCallId: 'c1',
          state: 'approval-requested',
          approval: { id: 'run-1:c1' },
        },
      ]);

      const posted = [user, answered(asked, true)];
      expect(uiApprovalResponses(posted, { runId: 'run-1' })).toEqual([
        { approvalId: 'run-1:c1', runId: 'run-1', callId: 'c1', approved: true },
      ]);
      // Another chat's run, or an id edited to name another run: refused, nothing decided.
      await expect(decideUIApprovals(approvals(store), posted, { runId: 'run-2' })).rejects.toThrow(
        /for another run than this chat's \('run-2'\)/,
      );
      const outcome = await decideUIApprovals(approvals(store), posted, { runId: 'run-1' });
      expect(outcome.decided.map((r) => r.callId)).toEqual(['c1']);
      expect(outcome.ignored).toEqual([]);
      // The same answer posted again changes nothing, and says so.
      const again = await decideUIApprovals(approvals(store), posted, { runId: 'run-1' });
      expect(again).toEqual({ decided: [], ignored: [expect.objectContaining({ callId: 'c1' })] });

      const result = await chain.resume('run-1', { store });
      expect(result.text).toBe('Dropped.');
      expect(result.details().toolCalls[0]?.result).toMatchObject({
        output: { dropped: 'tmp_2024' },
      });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 60_000);

  it('continues a live run in the same message after an approval (pauseOnApproval)', async () => {
    const store = memoryStore();
    const chain = dropChain();
    const events = chain.stream('Drop tmp_2024', { runId: 'run-live', store });
    const first = await collect(
      toUIMessageStream(events, { runId: 'run-live', messageId: 'a1', pauseOnApproval: true }),
    );
    expect(first.at(-1)).toEqual({ type: 'finish', finishReason: 'tool-calls' });
    const asked = await fold(first);
    expect(asked.id).toBe('a1');

    const posted = [user, answered(asked, true)];
    await decideUIApprovals(approvals(store), posted, { runId: 'run-live' });
    const rest = await collect(
      toUIMessageStream(events, { runId: 'run-live', messageId: 'a1', pauseOnApproval: true }),
    );
    expect(rest.map((c) => c.type)).toEqual([
      'start',
      'tool-approval-response',
      'tool-output-available',
      'start-step',
      'text-start',
      'text-delta',
      'text-end',
      'finish-step',
      'data-result',
      'message-metadata',
      'finish',
    ]);
    const done = await fold(rest, posted[1]);
    expect(done.id).toBe('a1');
    expect(toolParts(done)).toMatchObject([
      {
        toolCallId: 'c1',
        state: 'output-available',
        approval: { id: 'run-live:c1', approved: true },
      },
    ]);
    expect(
      done.parts.filter((p) => p.type === 'text').map((p) => (p as { text: string }).text),
    ).toEqual(['Dropped.']);
    // The run has ended: a third stream on its events has nothing more to say.
    const after = await collect(toUIMessageStream(events, { messageId: 'a1' }));
    expect(after.map((c) => c.type)).toEqual(['start', 'finish']);
  }, 60_000);

  it('writes a denial as tool-output-denied, and the model reads the reason', async () => {
    const store = memoryStore();
    const chain = dropChain();
    const events = chain.stream('Drop tmp_2024', { runId: 'run-deny', store });
    const asked = await fold(
      await collect(toUIMessageStream(events, { runId: 'run-deny', pauseOnApproval: true })),
    );
    const posted = [user, answered(asked, false, 'not on a Friday')];
    expect(uiApprovalResponses(posted, { runId: 'run-deny' })).toEqual([
      {
        approvalId: 'run-deny:c1',
        runId: 'run-deny',
        callId: 'c1',
        approved: false,
        reason: 'not on a Friday',
      },
    ]);
    await decideUIApprovals(approvals(store), posted, { runId: 'run-deny' });
    const rest = await collect(
      toUIMessageStream(events, { runId: 'run-deny', messageId: asked.id, pauseOnApproval: true }),
    );
    expect(rest).toContainEqual({ type: 'tool-output-denied', toolCallId: 'c1' });
    expect(rest.map((c) => c.type)).not.toContain('tool-output-error');
    const done = await fold(rest, posted[1]);
    expect(toolParts(done)).toMatchObject([
      { state: 'output-denied', approval: { approved: false, reason: 'not on a Friday' } },
    ]);
    expect(
      done.parts.filter((p) => p.type === 'text').map((p) => (p as { text: string }).text),
    ).toEqual(['Not dropped: Not approved: not on a Friday']);
  }, 60_000);

  it("asks for a tool loop's command by its call id, and the loop resumes after the answer", async () => {
    const store = memoryStore();
    const loop = createToolLoop({
      tools: [dropTable],
      planner: (given) =>
        (given as { roundIndex: number }).roundIndex > 0
          ? { nextAction: 'response', executionCommands: [] }
          : {
              nextAction: 'execute',
              executionCommands: [
                {
                  purpose: 'Drop it',
                  toolName: 'drop_table',
                  toolKwargs: { table: 'tmp_2024' },
                  todoSuggestion: 'done',
                },
              ],
            },
      respond: ({ actionResults }) => `Result: ${JSON.stringify(actionResults)}`,
    });
    const events = loop.stream('Drop tmp_2024', { runId: 'loop-1', store, parkForApproval: true });
    const asked = await fold(await collect(toUIMessageStream(events, { runId: 'loop-1' })));
    expect(toolParts(asked)).toMatchObject([
      {
        type: 'tool-drop_table',
        toolCallId: 'round1_0',
        state: 'approval-requested',
        approval: { id: 'loop-1:round1_0' },
      },
    ]);
    const outcome = await decideUIApprovals(approvals(store), [user, answered(asked, true)], {
      runId: 'loop-1',
    });
    expect(outcome.decided.map((r) => r.callId)).toEqual(['round1_0']);
    const result = await loop.resume('loop-1', { store });
    expect(result.answer).toBe('Result: {"Drop it":{"dropped":"tmp_2024"}}');
  }, 60_000);

  it('refuses answers of another shape or on calls the run never asked about', async () => {
    const store = memoryStore();
    const chain = dropChain();
    const events = chain.stream('Drop tmp_2024', { runId: 'run-3', store });
    const asked = await fold(
      await collect(toUIMessageStream(events, { runId: 'run-3', pauseOnApproval: true })),
    );
    const posted = answered(asked, true);
    const withId = (id: string) => {
      const copy = structuredClone(posted);
      const part = toolParts(copy)[0];
      if (part?.approval) part.approval.id = id;
      if (part) part.toolCallId = id.split(':')[1] ?? part.toolCallId;
      return [user, copy];
    };
    // A call id the run never asked about: the store says so.
    await expect(
      decideUIApprovals(approvals(store), withId('run-3:c9'), { runId: 'run-3' }),
    ).rejects.toSatisfy(
      (error) =>
        JournalError.isInstance(error) &&
        error.message.includes("never asked for approval of call 'c9'"),
    );
    // An id no statecraft stream made.
    expect(() => uiApprovalResponses(withId('ap-1'), { runId: 'run-3' })).toThrow(InputError);
    // An id moved onto another call's part.
    const moved = structuredClone(posted);
    const part = toolParts(moved)[0];
    if (part) part.toolCallId = 'c2';
    expect(() => uiApprovalResponses([user, moved], { runId: 'run-3' })).toThrow(
      /on a part of another call/,
    );
    // Not the chat client's shape.
    expect(() => uiApprovalResponses({ messages: [] }, { runId: 'run-3' })).toThrow(InputError);
    const broken = structuredClone(posted);
    const brokenPart = toolParts(broken)[0];
    if (brokenPart?.approval) brokenPart.approval = { id: 'run-3:c1', approved: 'yes' as never };
    expect(() => uiApprovalResponses([user, broken], { runId: 'run-3' })).toThrow(
      /approved: boolean/,
    );
    // A new user message carries no answers.
    expect(uiApprovalResponses([user], { runId: 'run-3' })).toEqual([]);
    // Nothing was decided by any of these: the call still waits.
    expect((await approvals(store).list('run-3')).map((p) => p.callId)).toEqual(['c1']);
    await approvals(store).reject('run-3', 'c1', 'test over');
    for await (const _ of events) {
      // drain: the run ends
    }
  }, 60_000);
});
