import { chainRun, concurrentToolsRows } from './chain.js';
import { compileCostRows } from './compile-cost.js';
import { fmt, printTable, type Row } from './measure.js';
import { LOOPS, measureLoop } from './while-loop.js';

// `npm run bench`: every performance figure the issues ask for, printed as one table per
// topic. Figures depend on the machine; compare rows measured in the same run.

console.log(`statecraft bench — Node ${process.version}, ${process.platform}/${process.arch}`);
printTable('Compile pipeline (SPEC P4): cost per turn as runs grow', await compileCostRows());

const rows: Row[] = [];
const perStep: Record<string, number> = {};
for (const [name, loop] of [
  ...LOOPS,
  ['chain machine, all policy options on', chainRun] as const,
]) {
  const measured = await measureLoop(name, loop);
  perStep[name] = measured.perStep;
  rows.push(...measured.rows);
}
const raw = perStep['raw while loop'] as number;
rows.push({
  measure: 'chain per step ÷ raw while loop per step',
  value: `${fmt((perStep['chain machine, all policy options on'] as number) / raw, 1)}×`,
  note: 'same run, same model and tool',
});
printTable('Tool loops: scripted model, 10 tool calls + 1 answer per run', rows);
printTable('Concurrent tools (SPEC C, issue 3 item 4)', await concurrentToolsRows());
