import { compileCostRows } from './compile-cost.js';
import { printTable } from './measure.js';
import { whileLoopRows } from './while-loop.js';

// `npm run bench`: every performance figure the issues ask for, printed as one table per
// topic. Figures depend on the machine; compare rows measured in the same run.

console.log(`statecraft bench — Node ${process.version}, ${process.platform}/${process.arch}`);
printTable('Compile pipeline (SPEC P4): cost per turn as runs grow', await compileCostRows());
printTable(
  'Floor: hand-written while tool loop, scripted model, 10 tool calls + 1 answer',
  await whileLoopRows(),
);
