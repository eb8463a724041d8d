import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  attachment,
  createChain,
  defineTool,
  InputError,
  toolOutput,
  userMessage,
} from '../src/index.js';
import { attachmentSize, bytesOfBase64 } from '../src/model.js';
import { ScriptedModel } from '../src/testing.js';

const PNG = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 1, 2, 3]);

describe('attachment()', () => {
  it('reads the media type from the bytes and keeps them as base64', () => {
    const image = attachment({ data: PNG, name: 'a.png' });
    expect(image).toEqual({ mediaType: 'image/png', data: 'iVBORw0KGgoBAgM=', name: 'a.png' });
    expect(bytesOfBase64(image.data ?? '')).toEqual(PNG);
    expect(attachmentSize(image)).toBe(PNG.length);
    expect(Object.isFrozen(image)).toBe(true);
  });

  it('reads a data: URL as bytes and a URL extension as the media type', () => {
    expect(attachment({ url: 'data:image/png;base64,iVBORw0KGgoBAgM=' })).toEqual({
      mediaType: 'image/png',
      data: 'iVBORw0KGgoBAgM=',
    });
    expect(attachment({ url: 'https://example.com/a/report.PDF?x=1' })).toEqual({
      mediaType: 'application/pdf',
      url: 'https://example.com/a/report.PDF?x=1',
    });
  });

  it('refuses what it cannot describe, saying what to pass', () => {
    expect(() => attachment({ data: new Uint8Array([1, 2, 3]) })).toThrow(InputError);
    expect(() => attachment({ data: new Uint8Array([1, 2, 3]) })).toThrow(/pass mediaType/);
    expect(() => attachment({ url: 'https://example.com/blob' })).toThrow(/pass mediaType/);
    expect(() => attachment({ url: 'file:///etc/passwd', mediaType: 'text/plain' })).toThrow(
      /http\(s\) or data: URL/,
    );
    expect(() => attachment({ data: PNG, mediaType: 'png' })).toThrow(/type\/subtype/);
  });

  it('reads a data: URL passed as data, and refuses malformed URLs and base64 as InputError', () => {
    expect(attachment({ data: 'data:image/png;base64,iVBORw0KGgoBAgM=', name: 'a.png' })).toEqual({
      mediaType: 'image/png',
      data: 'iVBORw0KGgoBAgM=',
      name: 'a.png',
    });
    for (const url of ['http://', 'https://[bad']) {
      expect(() => attachment({ url })).toThrow(InputError);
      expect(() => attachment({ url, mediaType: 'image/png' })).toThrow(/http\(s\) or data: URL/);
    }
    expect(() => attachment({ data: 'not base64!', mediaType: 'text/plain' })).toThrow(
      /must be base64/,
    );
  });

  it('refuses a url that is not http(s) and a media type in capitals wherever plain JSON arrives', () => {
    const script = { mediaType: 'text/html', url: 'javascript:alert(document.cookie)' };
    expect(() => toolOutput('ok', [script as never])).toThrow(/not an http\(s\) URL/);
    expect(() => toolOutput('ok', [{ mediaType: 'IMAGE/PNG', data: 'iVBORw0K' }])).toThrow(
      /not lower-case/,
    );
    expect(() =>
      toolOutput('ok', [{ mediaType: 'image/png', data: 'data:image/png;base64,AA' }]),
    ).toThrow(/not base64/);
  });
});

describe('attachments in a run', () => {
  it('reach the model with the user message and with a tool result', async () => {
    const model = new ScriptedModel([
      { toolCalls: [{ name: 'chart', arguments: { series: 'sales' } }] },
      { text: 'A rising line.' },
    ]);
    const chart = defineTool({
      name: 'chart',
      description: 'Draws a chart',
      input: z.object({ series: z.string() }),
      execute: ({ series }) => toolOutput({ drawn: series }, [attachment({ data: PNG })]),
    });
    const chain = createChain({ model, tools: [chart] });
    const question = userMessage('Chart the sales', [attachment({ data: PNG, name: 'q.png' })]);
    const result = await chain.invoke({ messages: [question] });
    expect(result.status).toBe('succeeded');
    const second = model.requests[1]?.messages.toArray() ?? [];
    const user = second.find((m) => m.role === 'user');
    const tool = second.find((m) => m.role === 'tool');
    expect(user?.role === 'user' && user.attachments?.[0]?.name).toBe('q.png');
    expect(tool?.role === 'tool' && tool.output).toEqual({ drawn: 'sales' });
    expect(tool?.role === 'tool' && tool.attachments?.[0]?.mediaType).toBe('image/png');
  });

  it('refuses a message whose attachment is malformed, naming where', async () => {
    const chain = createChain({ model: new ScriptedModel([{ text: 'hi' }]) });
    await expect(
      chain.invoke({
        messages: [{ role: 'user', content: 'x', attachments: [{ mediaType: 'image/png' }] }],
      } as never),
    ).rejects.toThrow(/input\.messages\[0\]\.attachments\[0\] must have exactly one of data/);
  });
});
