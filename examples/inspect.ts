// Watch a chain run in the Stately inspector. This starts a local bridge on
// 127.0.0.1:8080 and opens http://127.0.0.1:8080, a page that embeds the inspector from
// stately.ai (that page needs a connection). Any run takes the inspector the same way:
// `chain.invoke(input, { inspect })`, `stream`, `batch`, and every Runnable's config, which hands
// it to the chains and tool loops inside. It needs @statelyai/inspect, an optional peer:
// `npm install @statelyai/inspect`.
//
// The bridge is the one `statecraft run --inspect` uses (your own script needs no code for it:
// `npx statecraft run my-script.ts --inspect`). It listens on 127.0.0.1 only and refuses foreign
// Host headers and foreign Origins, so neither another machine nor a web page open in a browser
// here can read the runs, prompts and answers included. (@statelyai/inspect's own bridge,
// `@statelyai/inspect/server`, listens on every network interface and checks neither.)
//
//   npm run inspect -- [--no-open] [--port 8080]
import { createChain, defineTool } from 'statecraft';
import { ScriptedModel } from 'statecraft/testing';
import { z } from 'zod';
import { CliError } from '../src/cli/cli-error.js';
import { DEFAULT_INSPECTOR_PORT, startInspectorBridge } from '../src/cli/inspector-bridge.js';

/** What the user can fix (a bad or busy port, a missing package): one line, no stack. */
function fail(message: string): never {
  process.stderr.write(`npm run inspect: ${message}\n`);
  process.exit(1);
}

const portFlag = process.argv.indexOf('--port');
const portText = portFlag === -1 ? String(DEFAULT_INSPECTOR_PORT) : process.argv[portFlag + 1];
const port = Number(portText);
if (!/^\d+$/.test(portText ?? '') || port < 1 || port > 65_535) {
  fail(`--port must be a port number (1-65535), got ${portText ?? 'nothing'}`);
}

const bridge = await startInspectorBridge({
  port,
  open: !process.argv.includes('--no-open'),
  name: 'npm run inspect',
  portInUse: (busy) =>
    `port ${busy} is busy (something else listens on it): choose another with --port, e.g. npm run inspect -- --port ${busy === 65_535 ? busy - 1 : busy + 1}`,
}).catch((error: unknown) =>
  error instanceof CliError ? fail(error.message) : Promise.reject(error),
);

const add = defineTool({
  name: 'add',
  description: 'Adds two numbers.',
  input: z.object({ a: z.number(), b: z.number() }),
  execute: ({ a, b }) => a + b,
});
// The scripted model takes its time, so the inspector shows each state as the run gets there.
const model = new ScriptedModel([
  { toolCalls: [{ name: 'add', arguments: { a: 2, b: 'three' } }], latencyMs: 400 },
  { toolCalls: [{ name: 'add', arguments: { a: 2, b: 3 } }], latencyMs: 400 },
  { text: 'The sum is {"answer": 5}.', latencyMs: 400 },
]);
const chain = createChain({ model, tools: [add], outputSchema: z.object({ answer: z.number() }) });

console.log(`Stately inspector: ${bridge.url}`);
const result = await chain.invoke('What is 2 + 3?', { inspect: bridge.inspect });
console.log('result:', result.result);
console.log('The inspector keeps the run; press Ctrl-C to stop.');

process.once('SIGINT', () => void bridge.stop());
