// Run by kill-approval.test.ts in a child process, which may kill it with SIGKILL while its
// run waits for a decision: a durable chain (fileStore) whose first step calls `drop_table`
// (needs approval) and `read_table` (does not). Every model call and tool execution appends
// a line to the side-effect log (appendFileSync: it survives SIGKILL). Prints:
//   asked ID        the run waits for a decision on call ID (its request is journaled)
//   output {...}    how the run ended: { text } or { error, code }
// Usage: node --conditions=statecraft-source --import tsx approval-child.ts '<config JSON>'
import { appendFileSync } from 'node:fs';
import {
  createChain,
  defineTool,
  fileStore,
  type LanguageModel,
  StatecraftError,
} from 'statecraft';
import type { ModelRequest } from 'statecraft/model';
import { z } from 'zod';
import { APPROVAL_RUN_ID, type ApprovalChildConfig } from './approval-workload.js';

const argument = process.argv[2];
if (argument === undefined) throw new Error("usage: approval-child.ts '<config JSON>'");
const config = JSON.parse(argument) as ApprovalChildConfig;
// Never outlive a test that lost track of this process.
setTimeout(() => process.exit(3), 20_000).unref();

const effect = (line: string) => appendFileSync(config.log, `${config.proc} ${line}\n`);
const print = (line: string) => process.stdout.write(`${line}\n`);

const toolResults = (request: ModelRequest) =>
  request.messages
    .toArray()
    .filter((m) => m.role === 'tool')
    .map((m) => (m as { output: unknown; error?: string }).error ?? String(m.output));

const model: LanguageModel = {
  specificationVersion: 'v1',
  provider: 'test',
  modelId: 'approval-script',
  async generate(request) {
    const results = toolResults(request);
    effect(`model ${results.length}`);
    const usage = { inputTokens: 10, outputTokens: 5, totalTokens: 15 };
    if (results.length === 0) {
      return {
        content: [
          {
            type: 'tool-call',
            toolCall: { id: 'c1', name: 'drop_table', arguments: { table: 'logs' } },
          },
          {
            type: 'tool-call',
            toolCall: { id: 'c2', name: 'read_table', arguments: { table: 'logs' } },
          },
        ],
        finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
        usage,
      };
    }
    return {
      content: [{ type: 'text', text: results.join(' | ') }],
      finishReason: { unified: 'stop', raw: 'stop' },
      usage,
    };
  },
  // stream() of a chain reads the model's parts: the same response, part by part.
  async *stream(request) {
    const response = await model.generate(request);
    for (const part of response.content) {
      if (part.type === 'text') yield { type: 'text-delta', delta: part.text };
      else yield part;
    }
    yield { type: 'usage', usage: response.usage };
    yield { type: 'finish', finishReason: response.finishReason };
  },
};

const tableTool = (name: string, needsApproval: boolean) =>
  defineTool({
    name,
    description: `${name} a table.`,
    input: z.object({ table: z.string() }),
    needsApproval,
    execute: ({ table }, { toolCallId }) => {
      effect(`tool ${toolCallId}`);
      return `${name} ${table}`;
    },
  });

const chain = createChain({
  model,
  tools: [tableTool('drop_table', true), tableTool('read_table', false)],
  ...(config.approvalTimeoutMs !== undefined && { approvalTimeoutMs: config.approvalTimeoutMs }),
  ...(config.onApprovalTimeout !== undefined && { onApprovalTimeout: config.onApprovalTimeout }),
});
const store = fileStore(config.dir);

async function main(): Promise<unknown> {
  try {
    if (config.mode === 'resume')
      return { text: (await chain.resume(APPROVAL_RUN_ID, { store })).text };
    const options = {
      runId: APPROVAL_RUN_ID,
      store,
      ...(config.parkForApproval && { parkForApproval: true }),
    };
    for await (const event of chain.stream('Clean up the logs table', options)) {
      if (event.type === 'approval-requested') print(`asked ${event.request.callId}`);
      if (event.type === 'final' && event.result) return { text: event.result.text };
    }
    return { error: 'the stream ended without a result' };
  } catch (error) {
    return StatecraftError.isInstance(error)
      ? { error: error.message, code: error.code }
      : { error: String(error) };
  }
}

print(`output ${JSON.stringify(await main())}`);
