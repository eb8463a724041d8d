// A tool loop whose tool returns toolOutput(output, attachments): the records keep the
// attachments, the planner reads what they are (never their base64), and the responder model
// is sent them in a user message naming the action result each came with.
import {
  attachment,
  createChain,
  createToolLoop,
  defineTool,
  memoryStore,
  toolOutput,
} from 'statecraft';
import { ScriptedModel } from 'statecraft/testing';
import { toolExecutionRecordSchema } from 'statecraft/tool-loop';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';

const png = attachment({
  data: new Uint8Array([0x89, 0x50, 0x4e, 0x47, ...Array.from({ length: 60 }, (_, i) => i)]),
  name: 'screen.png',
});
const pdf = attachment({ data: 'JVBERi0xLjQKJeLjz9MK', name: 'report.pdf' });

const screenshot = defineTool({
  name: 'screenshot',
  description: 'Takes a screenshot',
  input: z.object({}),
  execute: async () => toolOutput({ taken: true }, [png]),
});
const report = defineTool({
  name: 'report',
  description: 'Fetches the report',
  input: z.object({}),
  execute: async () => toolOutput('the report', [pdf]),
});

const plan = (...tools: string[]) =>
  JSON.stringify({
    nextAction: 'execute',
    executionCommands: tools.map((toolName) => ({
      purpose: `Get ${toolName}`,
      toolName,
      toolKwargs: {},
    })),
  });
const done = JSON.stringify({ nextAction: 'response', executionCommands: [] });

describe('a tool loop with tools that return attachments', () => {
  it('sends the responder the attachments, the planner only what they are', async () => {
    const model = new ScriptedModel([
      { text: plan('screenshot', 'report') },
      { text: done },
      { text: 'A screen and a report.' },
    ]);
    const result = await createToolLoop({ model, tools: [screenshot, report] }).invoke('Look');
    expect(result.answer).toBe('A screen and a report.');
    // The records keep them, and the records' schema accepts them.
    expect(result.toolLogs.map((record) => record.attachments)).toEqual([[png], [pdf]]);
    for (const record of result.toolLogs)
      expect(toolExecutionRecordSchema.parse(record)).toEqual(record);

    // Round 2's planner saw the records with summaries, not bytes.
    const planner = model.requests[1]?.messages.toArray().at(-1);
    expect(planner?.role === 'user' && planner.content).toContain('"name": "screen.png"');
    expect(planner?.role === 'user' && planner.content).toContain('"size": 64');
    expect(planner?.role === 'user' && planner.content).not.toContain(png.data);

    const respond = model.requests[2]?.messages.toArray() ?? [];
    const carrier = respond.at(-1);
    expect(carrier?.role).toBe('user');
    expect(carrier?.role === 'user' && carrier.attachments).toEqual([png, pdf]);
    expect(carrier?.role === 'user' && carrier.content).toBe(
      'The action results came with these attachments, in this order:\n[Get screenshot]: screen.png\n[Get report]: report.pdf',
    );
    expect(JSON.stringify(respond.slice(0, -1))).not.toContain(png.data);
  });

  it('a chain responder gets them in its input messages', async () => {
    const responderModel = new ScriptedModel([{ text: 'seen' }]);
    const model = new ScriptedModel([{ text: plan('screenshot') }, { text: done }]);
    const loop = createToolLoop({
      model,
      tools: [screenshot],
      respond: createChain({ model: responderModel }),
    });
    await loop.invoke('Look');
    const sent = responderModel.requests[0]?.messages.toArray() ?? [];
    expect(sent.flatMap((m) => (m.role === 'user' ? (m.attachments ?? []) : []))).toEqual([png]);
  });

  it('rejects a malformed attachment in a record', () => {
    const record = {
      purpose: 'p',
      toolName: 't',
      kwargs: {},
      todoSuggestion: '',
      next: '',
      success: true,
      result: 1,
      error: null,
      attachments: [{ mediaType: 'png', data: 'x' }],
    };
    expect(toolExecutionRecordSchema.safeParse(record).success).toBe(false);
  });

  it('a durable loop journals them once and a resume rebuilds the records', async () => {
    const script = () =>
      new ScriptedModel([
        { text: plan('screenshot', 'screenshot') },
        { text: plan('screenshot') },
        { text: done },
        { text: 'Three screens.' },
      ]);
    const store = memoryStore();
    const first = await createToolLoop({ model: script(), tools: [screenshot] }).invoke('Look', {
      runId: 'loop-attachments',
      store,
    });
    const entries = (await store.read('loop-attachments')) ?? [];
    expect(JSON.stringify(entries).split(png.data as string).length - 1).toBe(1);
    // Crashed after the second round's records, before the next plan was answered.
    const cut = memoryStore();
    const lastPlan = entries.findLastIndex(
      (entry) => entry.type === 'request' && entry.effect === 'plan',
    );
    for (const entry of entries.slice(0, lastPlan + 1)) await cut.append('loop-attachments', entry);
    const replayed = new ScriptedModel([{ text: done }, { text: 'Three screens.' }]);
    const resumed = await createToolLoop({ model: replayed, tools: [screenshot] }).resume(
      'loop-attachments',
      {
        store: cut,
      },
    );
    expect(resumed.answer).toBe(first.answer);
    expect(resumed.toolLogs.map((record) => record.attachments)).toEqual([[png], [png], [png]]);
    const respond = replayed.requests.at(-1)?.messages.toArray().at(-1);
    expect(respond?.role === 'user' && respond.attachments).toEqual([png, png, png]);
  });
});
