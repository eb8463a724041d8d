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
