import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { createChain, defineTool } from 'statecraft';
import { registerDeployment, restateRuns, serveCluster, startLocalRestate } from 'statecraft/restate';
import { ScriptedModel } from 'statecraft/testing';
import { z } from 'zod';

const [role = 'main', ingress = ''] = process.argv.slice(2);
const secret = process.env.STATECRAFT_SECRET ?? randomBytes(32).toString('base64url'); // the workers and every client share it
const refund = defineTool({ name: 'refund', description: 'Refunds an order.', input: z.object({ order: z.string() }),
  needsApproval: true, execute: ({ order }, { idempotencyKey }) => `refunded ${order} (key ${idempotencyKey})` });
const model = new ScriptedModel(({ messages }) => { const tool = messages.toArray().find((m) => m.role === 'tool');
  return tool?.role === 'tool' ? { text: `Done: ${tool.output ?? tool.error}.` } : { toolCalls: [{ id: 'c1', name: 'refund', arguments: { order: 'A-17' } }] }; });
const agents = { support: createChain({ name: 'support', model, tools: [refund] }) }; // workers and clients share these names

if (role === 'worker') { const cluster = await serveCluster({ agents, url: ingress, secret, port: 0, processes: 2 }); // Node cluster: 2 processes, 1 port
  if (cluster) { console.log(cluster.port); process.once('SIGTERM', () => void cluster.close().then(() => process.exit())); } }
else { const server = await startLocalRestate(); // your own restate-server in production; this one is for trying it
  const workers = spawn(process.execPath, [...process.execArgv, process.argv[1] ?? '', 'worker', server.url],
    { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, RESTATE_LOGGING: 'ERROR', STATECRAFT_SECRET: secret } }); // the SDK logs each invocation
  const [port] = await once(workers.stdout, 'data'); // the port the 2 worker processes listen on
  await registerDeployment({ adminUrl: server.adminUrl, workerUrl: `http://127.0.0.1:${String(port).trim()}` }); // once per deployment
  const runs = restateRuns({ url: server.url, secret }); // any process that reaches the server and holds the secret: submit, decide, read
  console.log('submit:', (await runs.submit('ticket-1', 'support', 'Refund order A-17.')).attached ? 'attached' : 'started');
  console.log('again:', (await runs.submit('ticket-1', 'support', 'Refund order A-17.')).attached ? 'attached to the same run' : 'started');
  while ((await runs.status('ticket-1'))?.state !== 'awaiting-approval') await new Promise((resolve) => setTimeout(resolve, 50));
  const [call] = await runs.approvals.list('ticket-1'); // it waits on a durable promise: no worker holds it meanwhile
  console.log(`waiting: ${call?.tool} ${JSON.stringify(call?.arguments)}; approve: ${await runs.approvals.approve('ticket-1', call?.callId ?? '')}, again: ${await runs.approvals.approve('ticket-1', call?.callId ?? '')}`);
  console.log('result:', (await runs.result<{ text: string }>('ticket-1')).text);
  console.log('without the secret:', await restateRuns({ url: server.url }).store.read('ticket-1').catch((error: Error) => error.name));
  workers.kill('SIGTERM'); await once(workers, 'exit'); await server.stop(); }
