// Watch a chain run in the Stately inspector (SPEC D1). @statelyai/inspect (an optional peer:
// `npm install @statelyai/inspect`) starts a bridge on port 8080 and opens
// http://localhost:8080, a page that embeds the inspector from stately.ai (that page needs a
// connection). Any run takes the inspector the same way: `chain.invoke(input, { inspect })`,
// `stream`, `batch`, and every Runnable's config, which hands it to the chains and tool loops
// inside.
//
// Mind what the bridge exposes: @statelyai/inspect's server (0.7) listens on every network
// interface, not only on localhost, and checks no Origin. Whoever can reach the port (another
// machine on the network, or any web page open in a browser here, through a WebSocket) is sent
// every event the runs report, prompts and model answers included. Run it on a machine and
// network you trust, with data you would show them; the package offers no option to bind it to
// 127.0.0.1. (`statecraft view` is the local alternative: it listens on 127.0.0.1 only.)
//
//   npx tsx examples/inspect.ts [--no-open] [--port 8080]
import { createWebSocketInspector } from '@statelyai/inspect';
import { createInspectorServer } from '@statelyai/inspect/server';
import { createChain, defineTool } from 'statecraft';
import { ScriptedModel } from 'statecraft/testing';
import { z } from 'zod';

const portFlag = process.argv.indexOf('--port');
const port = portFlag === -1 ? 8080 : Number(process.argv[portFlag + 1]);
if (!Number.isInteger(port) || port < 1 || port > 65_535) {
  throw new Error(`--port must be a port number (1-65535), got ${process.argv[portFlag + 1]}`);
}

const server = createInspectorServer({ port, autoOpen: !process.argv.includes('--no-open') });
const inspector = createWebSocketInspector({ url: `ws://localhost:${port}` });

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

console.log(`Stately inspector: http://localhost:${port}`);
const result = await chain.invoke('What is 2 + 3?', { inspect: inspector.inspect });
console.log('result:', result.result);
console.log('The inspector keeps the run; press Ctrl-C to stop.');

process.once('SIGINT', () => {
  inspector.stop();
  server.stop();
});
