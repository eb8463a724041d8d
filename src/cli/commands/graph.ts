import { type Command, Option } from 'commander';
import { toJSON } from '../../viz/to-json.js';
import { type MermaidDirection, toMermaid } from '../../viz/to-mermaid.js';
import { loadExport } from '../load-export.js';
import { machineOf } from '../machine-of.js';

// `statecraft graph <module>#<export>`: the machine as a Mermaid state diagram (paste it in a
// README: GitHub renders it) or as JSON for Stately Studio (SPEC D1).

interface GraphOptions {
  readonly format: 'mermaid' | 'json';
  readonly direction?: MermaidDirection;
  readonly details: boolean;
}

export function graphCommand(program: Command): void {
  program
    .command('graph')
    .description('print a machine as a Mermaid state diagram or as JSON for Stately Studio')
    .argument('<module#export>', 'a module path and the name of its machine, Chain or ToolLoop')
    .addOption(
      new Option('-f, --format <format>', 'output format')
        .choices(['mermaid', 'json'])
        .default('mermaid'),
    )
    .addOption(
      new Option('-d, --direction <direction>', 'Mermaid layout direction').choices([
        'TB',
        'BT',
        'LR',
        'RL',
      ]),
    )
    .option('--no-details', 'leave entry/exit actions and invokes out of the state boxes')
    .action(async (ref: string, options: GraphOptions) => {
      const loaded = await loadExport(ref);
      const machine = machineOf(loaded.value, `${loaded.module}#${loaded.exportName}`);
      const text =
        options.format === 'json'
          ? `${JSON.stringify(toJSON(machine), null, 2)}\n`
          : toMermaid(machine, {
              details: options.details,
              ...(options.direction && { direction: options.direction }),
            });
      process.stdout.write(text);
    });
}
