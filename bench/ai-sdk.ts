import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { createChain, defineTool, type LanguageModel } from 'statecraft';
import { fromAiSdk } from 'statecraft/ai-sdk';
import { OpenAIChatModel } from 'statecraft/openai';
import { z } from 'zod';
import { fmt, median, type Row } from './measure.js';

// What a step costs through `fromAiSdk` (statecraft/ai-sdk over @ai-sdk/openai-compatible)
// against the same step through statecraft's own OpenAI adapter (the `openai` SDK): one
// process, one local scripted Chat Completions server on 127.0.0.1 answering both, so the
// difference is the two clients and their mappings. A run is two model steps: a call of the
// tool, then the answer; generated (`invoke`) and streamed (`stream`) separately.
// `npm run bench -- ai-sdk` prints only this table.

const STEPS_PER_RUN = 2;
const ROUNDS = 7;
const RUNS_PER_ROUND = 40;

const usage = { prompt_tokens: 20, completion_tokens: 5, total_tokens: 25 };

/** The server's answer to a request: a tool call, or the answer once the tool has answered. */
function answer(body: { messages?: { role: string }[] }) {
  const answered = body.messages?.at(-1)?.role === 'tool';
  return answered
    ? { content: 'The sum is 5.', tool_calls: undefined, finish_reason: 'stop' }
    : {
        content: null,
        tool_calls: [
          {
            index: 0,
            id: 'call_1',
            type: 'function',
            function: { name: 'add', arguments: '{"a":2,"b":3}' },
          },
        ],
        finish_reason: 'tool_calls',
      };
}

function respond(req: IncomingMessage, res: ServerResponse, text: string): void {
  const body = JSON.parse(text) as { stream?: boolean; messages?: { role: string }[] };
  const { content, tool_calls, finish_reason } = answer(body);
  const base = { id: 'chatcmpl-1', created: 1, model: 'bench-model' };
  if (!body.stream) {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({
        ...base,
        object: 'chat.completion',
        choices: [{ index: 0, message: { role: 'assistant', content, tool_calls }, finish_reason }],
        usage,
      }),
    );
    return;
  }
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  const chunk = (delta: object, finish: string | null, extra: object = {}) =>
    `data: ${JSON.stringify({ ...base, object: 'chat.completion.chunk', choices: [{ index: 0, delta, finish_reason: finish }], ...extra })}\n\n`;
  let out = chunk({ role: 'assistant', content: content ?? null, tool_calls }, null);
  out += chunk({}, finish_reason, { usage });
  res.end(`${out}data: [DONE]\n\n`);
  void req;
}

async function startServer() {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => respond(req, res, Buffer.concat(chunks).toString('utf8')));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/v1`, close: () => server.close() };
}

const add = defineTool({
  name: 'add',
  description: 'Adds two numbers.',
  input: z.object({ a: z.number(), b: z.number() }),
  execute: ({ a, b }) => a + b,
});

type Way = 'invoke' | 'stream';

// One chain per model, built once, as an application would.
const chains = new WeakMap<LanguageModel, ReturnType<typeof createChain>>();

async function run(model: LanguageModel, way: Way): Promise<void> {
  let chain = chains.get(model);
  if (!chain) {
    chain = createChain({ model, tools: [add] });
    chains.set(model, chain);
  }
  let result: unknown;
  if (way === 'invoke') result = (await chain.invoke('2 + 3?')).result;
  else {
    for await (const event of chain.stream('2 + 3?')) {
      if (event.type === 'final') result = event.result?.result;
    }
  }
  if (result !== 'The sum is 5.')
    throw new Error(`the AI SDK bench run answered ${String(result)}`);
}

/** µs per model step of each model and way, interleaved round by round; medians of all runs. */
async function perStep(
  models: Readonly<Record<string, LanguageModel>>,
  way: Way,
): Promise<Map<string, number>> {
  const samples = new Map<string, number[]>(Object.keys(models).map((name) => [name, []]));
  for (let round = -1; round < ROUNDS; round++) {
    for (const [name, model] of Object.entries(models)) {
      for (let i = 0; i < RUNS_PER_ROUND; i++) {
        const start = process.hrtime.bigint();
        await run(model, way);
        const micros = Number(process.hrtime.bigint() - start) / 1000 / STEPS_PER_RUN;
        if (round >= 0) samples.get(name)?.push(micros);
      }
    }
  }
  return new Map([...samples].map(([name, times]) => [name, median(times)]));
}

export async function aiSdkRows(): Promise<Row[]> {
  const server = await startServer();
  try {
    const models = {
      openai: new OpenAIChatModel({
        model: 'bench-model',
        apiKey: 'k',
        baseURL: server.url,
        maxRetries: 0,
      }),
      aiSdk: fromAiSdk(
        createOpenAICompatible({
          name: 'local',
          baseURL: server.url,
          apiKey: 'k',
          includeUsage: true,
        })('bench-model'),
      ),
    };
    const rows: Row[] = [];
    for (const way of ['invoke', 'stream'] as const) {
      const steps = await perStep(models, way);
      const openai = steps.get('openai') as number;
      const aiSdk = steps.get('aiSdk') as number;
      const label = way === 'invoke' ? 'generated' : 'streamed';
      rows.push(
        {
          measure: `chain step, ${label}: statecraft/openai (OpenAIChatModel)`,
          value: `${fmt(openai)} µs`,
          note: 'median; one model call and one tool call per step over local HTTP',
        },
        {
          measure: `chain step, ${label}: fromAiSdk(@ai-sdk/openai-compatible)`,
          value: `${fmt(aiSdk)} µs`,
          note: 'same server, same chain, same process',
        },
        {
          measure: `fromAiSdk ÷ statecraft/openai, ${label}`,
          value: `${fmt(aiSdk / openai)}×`,
          note: `${aiSdk >= openai ? '+' : ''}${fmt(aiSdk - openai, 0)} µs per step`,
        },
      );
    }
    return rows;
  } finally {
    server.close();
  }
}
