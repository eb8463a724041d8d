// Spans of a run with attachments: the agent span (its input), each chat span (its messages)
// and each tool span (its result) carry statecraft.attachments.count and .bytes, and no
// attribute ever holds an attachment's base64, with captureContent on or off.
import { attachment, createChain, defineTool, toolOutput, userMessage } from 'statecraft';
import { otelObserver } from 'statecraft/otel';
import { ScriptedModel } from 'statecraft/testing';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { tracing } from './tracing.js';

const png = attachment({
  data: new Uint8Array([0x89, 0x50, 0x4e, 0x47, ...Array.from({ length: 996 }, (_, i) => i % 9)]),
  name: 'screen.png',
});
const pdf = attachment({ url: 'https://example.com/report.pdf' });

const screenshot = defineTool({
  name: 'screenshot',
  description: 'Takes a screenshot',
  input: z.object({}),
  execute: async () => toolOutput({ taken: true }, [png, pdf]),
});

async function traced(captureContent: boolean) {
  const trace = tracing();
  const model = new ScriptedModel([
    { toolCalls: [{ id: 'c1', name: 'screenshot', arguments: {} }] },
    { text: 'Seen.' },
  ]);
  await createChain({ model, tools: [screenshot], name: 'looker' }).invoke(
    { messages: [userMessage('Look', [png])] },
    { observers: otelObserver({ tracer: trace.tracer, captureContent }) },
  );
  return trace;
}

const counts = (attributes: Record<string, unknown>) => [
  attributes['statecraft.attachments.count'],
  attributes['statecraft.attachments.bytes'],
];

describe('attachments on spans', () => {
  it('counts and sizes them on the agent, chat and tool spans', async () => {
    const trace = await traced(false);
    expect(counts(trace.one('invoke_agent looker').attributes)).toEqual([1, 1000]);
    expect(trace.named('chat scripted-model').map((span) => counts(span.attributes))).toEqual([
      [1, 1000],
      [3, 2000],
    ]);
    expect(counts(trace.one('execute_tool screenshot').attributes)).toEqual([2, 1000]);
  });

  it('never puts base64 in an attribute; with captureContent the messages name the attachments', async () => {
    for (const capture of [false, true]) {
      const trace = await traced(capture);
      for (const span of trace.spans()) {
        expect(JSON.stringify(span.attributes)).not.toContain(png.data?.slice(0, 40));
      }
    }
    const trace = await traced(true);
    const sent = JSON.parse(
      String(trace.named('chat scripted-model')[1]?.attributes['gen_ai.input.messages']),
    );
    const tool = sent.find((message: { role: string }) => message.role === 'tool');
    expect(tool.parts.slice(1)).toEqual([
      {
        type: 'attachment',
        modality: 'image',
        mime_type: 'image/png',
        name: 'screen.png',
        size: 1000,
      },
      {
        type: 'uri',
        modality: 'file',
        mime_type: 'application/pdf',
        uri: 'https://example.com/report.pdf',
      },
    ]);
  });

  it('leaves the attributes out of a run without attachments', async () => {
    const trace = tracing();
    await createChain({ model: new ScriptedModel([{ text: 'Hi.' }]) }).invoke('hello', {
      observers: otelObserver({ tracer: trace.tracer }),
    });
    for (const span of trace.spans())
      expect(span.attributes).not.toHaveProperty('statecraft.attachments.count');
  });
});
