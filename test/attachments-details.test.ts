// details() of a run whose input and tool results carry attachments: each model call lists
// what its messages carried and each tool call what its result carried (type, name, size,
// never the bytes in the summaries), and formatRunDetails prints them without the bytes.
import {
  attachment,
  createChain,
  createToolLoop,
  defineTool,
  formatRunDetails,
  toolOutput,
  userMessage,
} from 'statecraft';
import { ScriptedModel } from 'statecraft/testing';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';

const png = attachment({
  data: new Uint8Array([0x89, 0x50, 0x4e, 0x47, ...Array.from({ length: 2044 }, (_, i) => i % 7)]),
  name: 'screen.png',
});
const chart = attachment({ url: 'https://example.com/chart.png' });

const screenshot = defineTool({
  name: 'screenshot',
  description: 'Takes a screenshot',
  input: z.object({}),
  execute: async () => toolOutput({ taken: true }, [png, chart]),
});

describe('details() of a run with attachments', () => {
  it('summarises attachments per model call and per tool call', async () => {
    const model = new ScriptedModel([
      { toolCalls: [{ id: 'c1', name: 'screenshot', arguments: {} }] },
      { text: 'Two pictures.' },
    ]);
    const result = await createChain({ model, tools: [screenshot] }).invoke({
      messages: [userMessage('What is on screen?', [png])],
    });
    const details = result.details();
    const pngSummary = { mediaType: 'image/png', name: 'screen.png', size: 2048 };
    const chartSummary = { mediaType: 'image/png', size: 0, url: 'https://example.com/chart.png' };
    expect(details.modelCalls[0]?.request.attachments).toEqual([{ message: 1, ...pngSummary }]);
    expect(details.modelCalls[1]?.request.attachments).toEqual([
      { message: 1, ...pngSummary },
      { message: 3, ...pngSummary },
      { message: 3, ...chartSummary },
    ]);
    expect(details.toolCalls[0]?.attachments).toEqual([pngSummary, chartSummary]);
    // The messages and the result stay whole, as sent.
    expect(details.toolCalls[0]?.result.attachments).toEqual([png, chart]);

    const text = formatRunDetails(details);
    expect(text).toContain(
      '+ 2 attachment(s) (image/png screen.png 2.0 KB, image/png https://example.com/chart.png)',
    );
    expect(text).toContain('4 message(s) with 3 attachment(s)');
    expect(text).not.toContain(png.data);
  });

  it('a run without attachments has no attachment fields', async () => {
    const model = new ScriptedModel([{ text: 'Hi.' }]);
    const details = (await createChain({ model }).invoke('hello')).details();
    expect(details.modelCalls[0]?.request).not.toHaveProperty('attachments');
  });

  it('a tool loop records its tools’ attachments too', async () => {
    const model = new ScriptedModel([
      {
        text: JSON.stringify({
          nextAction: 'execute',
          executionCommands: [{ purpose: 'Look', toolName: 'screenshot', toolKwargs: {} }],
        }),
      },
      { text: JSON.stringify({ nextAction: 'response', executionCommands: [] }) },
      { text: 'Two pictures [Look].' },
    ]);
    const loop = createToolLoop({ model, tools: [screenshot] });
    const result = await loop.invoke('Take a screenshot');
    expect(result.details().toolCalls[0]?.attachments).toHaveLength(2);
  });
});
