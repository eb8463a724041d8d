// An MCP tool's image, end to end: a real MCP server (test/fixtures/mcp/server.ts, over
// Streamable HTTP on 127.0.0.1) whose `picture` tool returns an image and a PDF, a chain that
// runs it remotely, and the real `openai` SDK against the replay server: the model's next
// request must carry both, in the user message the Chat adapter adds after the tool message.
import { createChain } from 'statecraft';
import { McpToolExecutor } from 'statecraft/mcp';
import { OpenAIChatModel } from 'statecraft/openai';
import { afterEach, describe, expect, it } from 'vitest';
import {
  type FixtureHttpServer,
  PIXEL_PNG,
  startHttpServer,
  TINY_PDF,
} from '../fixtures/mcp/server.js';
import { jsonFixture, type ReplayServer, startReplayServer } from '../support/replay-server.js';

const PICTURE_CALL = 'call_Pz4mK8vQ1nX7bL2wR5tY9cHd';

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.allSettled(closers.splice(0).map((close) => close()));
});

describe('an MCP tool that returns an image', () => {
  it('reaches the model: a chain sends it in the user message after the tool message', async () => {
    const mcp: FixtureHttpServer = await startHttpServer();
    closers.push(() => mcp.close());
    const executor = await McpToolExecutor.connect({ transport: { type: 'http', url: mcp.url } });
    closers.push(() => executor.close());
    const at: ReplayServer = await startReplayServer([
      { json: jsonFixture('openai', 'chat-picture-call.json') },
      { json: jsonFixture('openai', 'chat-text.json') },
    ]);
    closers.push(() => at.close());
    const model = new OpenAIChatModel({
      model: 'gpt-4.1-mini',
      apiKey: 'sk-test',
      baseURL: `${at.url}/v1`,
    });

    const run = await createChain({ model, remote: executor }).invoke('Draw the chart');

    expect(run.status).toBe('succeeded');
    const body = at.requests[1]?.body as { messages: Record<string, unknown>[] } | undefined;
    const messages = body?.messages ?? [];
    const tool = messages.findIndex((m) => m.role === 'tool');
    expect(messages[tool]).toMatchObject({
      tool_call_id: PICTURE_CALL,
      content: expect.stringContaining('[image image/png, 68 bytes, attached]'),
    });
    expect(messages.slice(tool + 1)).toEqual([
      {
        role: 'user',
        content: [
          {
            type: 'text',
            text: `Attachments returned by the tool call picture (id ${PICTURE_CALL}), 2 items:`,
          },
          { type: 'image_url', image_url: { url: `data:image/png;base64,${PIXEL_PNG}` } },
          {
            type: 'file',
            file: { file_data: `data:application/pdf;base64,${TINY_PDF}`, filename: 'chart.pdf' },
          },
        ],
      },
    ]);
  });
});
