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
    .addHelpText(
      'after',
      [
        '',
        'A failure is one line on stderr, and exit code 1. Set STATECRAFT_DEBUG=1 to add its',
        "stack and those of its causes (a model error's cause is the provider SDK's error).",
      ].join('\n'),
    )
    .exitOverride();
  for (const register of COMMANDS) register(program);
  return program;
}
