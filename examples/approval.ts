import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { ApprovalPendingError, approvals, createChain, defineTool, fileStore } from 'statecraft';
import { ScriptedModel } from 'statecraft/testing';
import { z } from 'zod';

const [dir = mkdtempSync(`${tmpdir()}/statecraft-`), role = 'main'] = process.argv.slice(2);
const dropTable = defineTool({ name: 'drop_table', description: 'Drops a table.', input: z.object({ table: z.string() }),
  needsApproval: true, execute: ({ table }) => `dropped ${table}` }); // a person decides before it runs
const model = new ScriptedModel(({ messages }) => { const tool = messages.toArray().find((m) => m.role === 'tool');
  return tool?.role === 'tool' ? { text: `Done: ${tool.output ?? tool.error}.` } : { toolCalls: [{ id: 'c1', name: 'drop_table', arguments: { table: 'tmp_2024' } }] }; });
const chain = createChain({ model, tools: [dropTable] }), store = fileStore(`${dir}/runs`);
const step = (name: string) => spawnSync(process.execPath, [...process.execArgv, process.argv[1] ?? '', dir, name], { stdio: 'inherit' });
if (role === 'start') await chain.invoke('Drop the tmp_2024 table.', { runId: 'cleanup-1', store, parkForApproval: true }).catch((error) => {
  if (!ApprovalPendingError.isInstance(error)) throw error; console.log(`process 1: parked on ${error.approvals[0]?.tool}, exits`); });
else if (role === 'approve') for (const call of await approvals(store).list()) { // any process, any time later
  console.log(`process 2: approves ${call.tool} ${JSON.stringify(call.arguments)} of run ${call.runId}`); await approvals(store).approve(call.runId, call.callId); }
else { step('start'); step('approve'); const result = await chain.resume('cleanup-1', { store }); // replays, then runs the approved call
  console.log(`process 3: ${result.text}`); rmSync(dir, { recursive: true }); }
