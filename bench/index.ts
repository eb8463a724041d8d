import { aiSdkRows } from './ai-sdk.js';
import { chainRun, concurrentToolsRows } from './chain.js';
import { compileCostRows } from './compile-cost.js';
import { durableRows } from './durable.js';
import { importTimeRows } from './import-time.js';
import { linearScanRows } from './linear-scans.js';
import { listingRows } from './listing.js';
import { fmt, printTable } from './measure.js';
import { toolLoopConcurrencyRows, toolLoopRoundRows } from './tool-loop.js';
import { typeCostRows } from './type-cost.js';
import { LOOPS, measureLoops } from './while-loop.js';

// `npm run bench`: every performance figure the issues ask for, printed as one table per
// topic. Figures depend on the machine; compare rows measured in the same run.

console.log(`statecraft bench — Node ${process.version}, ${process.platform}/${process.arch}`);
printTable('Import time: a fresh process loading the package', await importTimeRows());
// `npm run bench -- import`: only the import-time table, for iterating on what the root loads.
if (process.argv.includes('import')) process.exit(0);
const AI_SDK_TITLE =
  'AI SDK models (issue 26): a chain step through fromAiSdk against statecraft/openai';
// `npm run bench -- ai-sdk`: only the AI SDK table (after the import times, always printed).
if (process.argv.includes('ai-sdk')) {
  printTable(AI_SDK_TITLE, await aiSdkRows());
  process.exit(0);
}
printTable('Compile pipeline (SPEC P4): cost per turn as runs grow', await compileCostRows());
printTable('Scans over model output (SPEC Q1): linear in the answer', await linearScanRows());

const CHAIN = 'chain machine, all policy options on';
const { perStep, rows } = await measureLoops([...LOOPS, [CHAIN, chainRun]]);
rows.push({
  measure: 'chain per step ÷ raw while loop per step',
  value: `${fmt((perStep.get(CHAIN) as number) / (perStep.get('raw while loop') as number), 1)}×`,
  note: 'same run, same model and tool',
});
printTable('Tool loops: scripted model, 10 tool calls + 1 answer per run', rows);
printTable('Concurrent tools (SPEC C, issue 3 item 4)', await concurrentToolsRows());
printTable('Tool-loop machine (SPEC T, issue 4 item 7)', [
  ...(await toolLoopConcurrencyRows()),
  ...(await toolLoopRoundRows(perStep.get(CHAIN) as number)),
  {
    measure: 'chain per step (from the loop table above)',
    value: `${fmt(perStep.get(CHAIN) as number)} µs`,
    note: 'one model step + one tool call',
  },
]);
printTable('Durable runs (issue 15): journal cost per chain step, and resume', await durableRows());
printTable('Listing a store of many runs (issue 23)', await listingRows());
printTable(
  "Type-checking an app (issue 24): what statecraft's types cost tsc",
  await typeCostRows(),
);
printTable(AI_SDK_TITLE, await aiSdkRows());
