import { spawnSync } from 'node:child_process';
import { appendFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createChain, defineTool, fileStore } from 'statecraft';
import { ScriptedModel } from 'statecraft/testing';
import { z } from 'zod';

const [dir = mkdtempSync(`${tmpdir()}/statecraft-`), role = 'main'] = process.argv.slice(2);
const charge = defineTool({ name: 'charge', description: 'Charges an order.', input: z.object({ order: z.string() }),
  execute: ({ order }, { idempotencyKey }) => { if (role === 'doomed' && order === 'b') process.kill(process.pid, 'SIGKILL'); // kill -9
    appendFileSync(`${dir}/charges.log`, `charged ${order}, key ${idempotencyKey}\n`); return 'ok'; } }); // the side effect
const model = new ScriptedModel(({ messages }) => { const n = messages.toArray().filter((m) => m.role === 'assistant').length;
  return n < 2 ? { toolCalls: [{ id: `c${n + 1}`, name: 'charge', arguments: { order: 'ab'[n] } }] } : { text: 'Both charged.' }; });
const chain = createChain({ model, tools: [charge] }), store = fileStore(`${dir}/runs`); // one fsynced JSONL file per run
if (role === 'doomed') await chain.invoke('Charge orders a and b.', { runId: 'orders-1', store });
else { console.log('first process:', spawnSync(process.execPath, [...process.execArgv, process.argv[1] ?? '', dir, 'doomed']).signal);
  const result = await chain.resume('orders-1', { store }); // replays the journal, then goes on live
  console.log(`${readFileSync(`${dir}/charges.log`, 'utf8')}${result.text}`);
  for (const { call, replayed } of result.details().toolCalls) console.log(`${call.id}: ${replayed ? 'from the journal, not run again' : 'in flight at the kill: issued once more, same key'}`);
  rmSync(dir, { recursive: true }); }
