import { Command } from 'commander';
import { graphCommand } from './commands/graph.js';
import { pathsCommand } from './commands/paths.js';
import { runCommand } from './commands/run.js';
import { viewCommand } from './commands/view.js';
import { packageVersion } from './package-version.js';

// The `statecraft` command line. Each command lives in its own file under commands/ and is
// registered here, one line each.

const COMMANDS: readonly ((program: Command) => void)[] = [
  graphCommand,
  pathsCommand,
  runCommand,
  viewCommand,
];

export function createProgram(): Command {
  const program = new Command('statecraft')
    .description('See, walk and run statecraft agents: their statecharts, paths and runs.')
    .version(packageVersion(), '-V, --version', 'print the statecraft version')
    .showHelpAfterError('(statecraft --help lists the commands)')
    // commander's own usage errors read like ours: `statecraft: unknown command 'x'`.
    .configureOutput({
      outputError: (text, write) => write(text.replace(/^error: /, 'statecraft: ')),
    })
    .exitOverride();
  for (const register of COMMANDS) register(program);
  return program;
}
