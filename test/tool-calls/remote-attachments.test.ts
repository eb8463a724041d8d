// A remote tool executor's result may carry attachments: good ones reach the model with the
// result (only their own fields), a malformed one turns the call into a failed result that
// says what is wrong, and the run goes on.
import { attachment, createChain, type RemoteToolExecutor, type ToolResult } from 'statecraft';
import { ScriptedModel } from 'statecraft/testing';
import { describe, expect, it } from 'vitest';

const png = attachment({ data: new Uint8Array([0x89, 0x50, 0x4e, 0x47, 1, 2, 3]), name: 'a.png' });

function remoteReturning(attachments: unknown): RemoteToolExecutor {
  return {
    name: 'render-server',
    listTools: () => [{ name: 'render', description: 'Renders', inputSchema: { type: 'object' } }],
    execute: async (call) =>
      ({
        toolCallId: call.id,
        name: call.name,
        output: 'rendered',
        success: true,
        attachments,
      }) as ToolResult,
  };
}

async function run(attachments: unknown) {
  const model = new ScriptedModel([
    { toolCalls: [{ id: 'c1', name: 'render', arguments: {} }] },
    { text: 'ok' },
  ]);
  const result = await createChain({ model, remote: remoteReturning(attachments) }).invoke(
    'Render',
  );
  const sent = model.requests[1]?.messages.toArray().find((message) => message.role === 'tool');
  return { result, sent: sent?.role === 'tool' ? sent : undefined };
}

describe('attachments from a remote tool executor', () => {
  it('carries good ones to the model, with their own fields only', async () => {
    const { result, sent } = await run([
      { ...png, extra: 'dropped' },
      { url: 'https://example.com/b.pdf', mediaType: 'application/pdf' },
    ]);
    expect(result.status).toBe('succeeded');
    expect(sent?.success).toBe(true);
    expect(sent?.attachments).toEqual([
      png,
      { mediaType: 'application/pdf', url: 'https://example.com/b.pdf' },
    ]);
  });

  it.each([
    [[{ mediaType: 'image/png' }], 'attachments[0] must have exactly one of data (base64) and url'],
    [[png, { data: 'AAAA' }], "attachments[1] has no mediaType like 'image/png'"],
    [[{ mediaType: 'image/png', data: 42 }], 'attachments[0] has data that is not base64 text'],
    ['a.png', 'attachments that are not an array'],
    [[null], 'attachments[0] is not an object'],
  ])('turns %j into a failed result the model reads', async (attachments, words) => {
    const { result, sent } = await run(attachments);
    expect(result.status).toBe('succeeded');
    expect(sent?.success).toBe(false);
    expect(sent?.error).toContain("Tool 'render' on render-server returned");
    expect(sent?.error).toContain(words);
    expect(sent).not.toHaveProperty('attachments');
  });

  it('leaves a result without attachments as it was', async () => {
    const { sent } = await run(undefined);
    expect(sent?.success).toBe(true);
    expect(sent).not.toHaveProperty('attachments');
  });
});
