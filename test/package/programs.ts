// The small programs the scratch projects type-check and run: a chain with a defineTool tool
// and a structured answer, on ScriptedModel. The `@ts-expect-error` lines fail the type check
// if the packed declarations lose the tool's input type or the answer's type (each would
// become `any`, and the directive unused).

const body = `
const add = defineTool({
  name: 'add',
  description: 'Adds two numbers.',
  input: z.object({ a: z.number(), b: z.number() }),
  execute: ({ a, b }) => {
    // @ts-expect-error the tool's input is typed from its schema: a is a number
    const text: string = a;
    void text;
    return a + b;
  },
});
const model = new ScriptedModel([
  { toolCalls: [{ name: 'add', arguments: { a: 2, b: 3 } }] },
  { text: 'The sum is {"answer": 5}.' },
]);
const chain = createChain({ model, tools: [add], outputSchema: z.object({ answer: z.number() }) });
`;

const run = `
  const result = await chain.invoke('What is 2 + 3?');
  const answer: number = result.result.answer;
  // @ts-expect-error the answer is typed from outputSchema: a number
  const wrong: string = result.result.answer;
  console.log(\`\${result.status}: \${answer} in \${result.iterations} model calls (\${typeof wrong})\`);
`;

export const ESM_PROGRAM = `import { createChain, defineTool } from 'statecraft';
import { ScriptedModel } from 'statecraft/testing';
import { z } from 'zod';
${body}${run}`;

// No top-level await in CommonJS: the run is an async function.
export const COMMONJS_PROGRAM = `import { createChain, defineTool } from 'statecraft';
import { ScriptedModel } from 'statecraft/testing';
import { z } from 'zod';
${body}
async function main(): Promise<void> {${run}}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
`;

export const EXPECTED_OUTPUT = 'succeeded: 5 in 2 model calls (number)\n';

// A durable run on the file store, killed with SIGKILL in the middle of its second tool call
// and resumed in the first process: the lazily loaded file store, found and loaded from the
// installed package's chunks, in two processes. Plain JavaScript, run as it is.
export const DURABLE_PROGRAM = `import { spawnSync } from 'node:child_process';
import { appendFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createChain, defineTool, fileStore } from 'statecraft';
import { ScriptedModel } from 'statecraft/testing';
import { z } from 'zod';

const [dir = mkdtempSync(\`\${tmpdir()}/statecraft-\`), role = 'main'] = process.argv.slice(2);
const charge = defineTool({
  name: 'charge',
  description: 'Charges an order.',
  input: z.object({ order: z.string() }),
  execute: ({ order }, { idempotencyKey }) => {
    if (role === 'doomed' && order === 'b') process.kill(process.pid, 'SIGKILL');
    appendFileSync(\`\${dir}/charges.log\`, \`charged \${order}, key \${idempotencyKey}\\n\`);
    return 'ok';
  },
});
const model = new ScriptedModel(({ messages }) => {
  const n = messages.toArray().filter((m) => m.role === 'assistant').length;
  return n < 2
    ? { toolCalls: [{ id: \`c\${n + 1}\`, name: 'charge', arguments: { order: 'ab'[n] } }] }
    : { text: 'Both charged.' };
});
const chain = createChain({ model, tools: [charge] });
const store = fileStore(\`\${dir}/runs\`);
if (role === 'doomed') await chain.invoke('Charge orders a and b.', { runId: 'orders-1', store });
else {
  const first = spawnSync(process.execPath, [process.argv[1], dir, 'doomed'], { timeout: 60_000 });
  console.log('first process:', first.signal);
  const result = await chain.resume('orders-1', { store });
  console.log(\`\${readFileSync(\`\${dir}/charges.log\`, 'utf8')}\${result.text}\`);
  rmSync(dir, { recursive: true });
}
`;

export const DURABLE_OUTPUT = `first process: SIGKILL
charged a, key orders-1:c1
charged b, key orders-1:c2
Both charged.
`;
