import { type Command, InvalidArgumentError } from 'commander';
import { inspectRuns } from '../../observe/inspect-runs.js';
import { observeRuns } from '../../observe/registry.js';
import { availableExamples, exampleArgument, findExample } from '../find-example.js';
import { DEFAULT_INSPECTOR_PORT, startInspectorBridge } from '../inspector-bridge.js';
import { importModule } from '../load-export.js';
import { ProgressDisplay } from '../progress.js';

// `statecraft run <example>`: runs an example in this process and shows the progress of the
// runs it makes, as they happen, from the runs' own events (a process-wide RunObserver, so
// the example needs no change). The example's output stays on stdout; progress is on stderr.
// With --inspect, every chain and tool-loop run is also sent to the Stately inspector
// through a local bridge on 127.0.0.1 (SPEC D1, Q5), a process-wide inspector likewise.

interface RunOptions {
  readonly inspect?: boolean;
  readonly inspectPort: number;
  readonly open: boolean;
}

export function runCommand(program: Command): void {
  // Names only where there are examples to run (a checkout): an installed package has none.
  const examples = availableExamples();
  const shown = examples.includes('quickstart') ? 'quickstart' : './my-agent.ts';
  program
    .command('run')
    .description(
      examples.length > 0
        ? 'run an example (examples/<name>.ts or a path) and show its runs as they progress'
        : 'run a script and show its runs as they progress',
    )
    .argument('<example>', exampleArgument(examples))
    .argument('[args...]', "the example's own arguments, after --")
    .option(
      '--inspect',
      'also show every chain and tool-loop run in the Stately inspector (needs @statelyai/inspect)',
    )
    .option(
      '--inspect-port <port>',
      'port of the local inspector bridge and its page, on 127.0.0.1 (0: any free port)',
      parsePort,
      DEFAULT_INSPECTOR_PORT,
    )
    .option('--no-open', 'with --inspect: print the inspector URL without opening a browser')
    .addHelpText(
      'after',
      [
        '',
        'With --inspect, the page at http://127.0.0.1:<port> embeds the Stately inspector from',
        'stately.ai (that page needs a connection) and hands it the runs through a local bridge.',
        'The bridge listens on 127.0.0.1 only, and refuses requests with a foreign Host and',
        'WebSocket connections with a foreign Origin (any web page but its own): the runs,',
        'prompts and answers included, stay on this machine. Programs on this machine (which',
        'send no Origin) can still connect, as to any local port. The bridge stops when the',
        "example ends. Chains and tool loops invoked by an app's own machine",
        'are actors of that machine: they reach the inspector when the app passes `inspect` to',
        "its createActor, as XState's inspection is per actor system.",
        '',
        'Examples:',
        `  statecraft run ${shown}`,
        `  statecraft run ${shown} --inspect --inspect-port 8081`,
      ].join('\n'),
    )
    .action(async (example: string, args: string[], options: RunOptions) => {
      const path = findExample(example);
      const inspector = options.inspect
        ? await startInspectorBridge({ port: options.inspectPort, open: options.open })
        : undefined;
      const stopInspecting = inspector ? inspectRuns(inspector.inspect) : () => {};
      if (inspector) {
        process.stderr.write(`statecraft run: Stately inspector at ${inspector.url}\n`);
      }
      const progress = new ProgressDisplay(process.stderr);
      const stopObserving = observeRuns(progress);
      let runsSeen = 0;
      const stopCounting = observeRuns({ onRunStart: () => void runsSeen++ });
      const restoreStdout = keepStatusLineClear(progress);
      // The example reads its own arguments from process.argv, as when it runs by itself.
      const argv = process.argv;
      process.argv = [argv[0] ?? 'node', path, ...args];
      try {
        await importModule(path, (message) => `${example} failed: ${message}`);
        // A script that calls `main()` without `await` is imported before its runs start:
        // watch until the process has nothing left to do. The inspector bridge's server would
        // keep it busy forever, so with --inspect only the import is waited for.
        if (!inspector) await idle();
      } finally {
        process.argv = argv;
        stopObserving();
        stopCounting();
        stopInspecting();
        restoreStdout();
        progress.clear();
        await inspector?.stop();
      }
      process.stderr.write(`statecraft run: ${progress.summary()}\n`);
      if (runsSeen === 0) process.stderr.write(`statecraft run: ${NO_RUNS_HINT}\n`);
    });
}

const NO_RUNS_HINT =
  'no chain or tool-loop runs were observed: the script started none, or the statecraft it ' +
  "imports is a copy older than this CLI's that does not share run observers (run the " +
  "statecraft CLI installed in the script's own project: npx statecraft run <script>)";

/** Resolves when the process has no more work that would keep it alive (`beforeExit`). */
function idle(): Promise<void> {
  return new Promise((resolve) => process.once('beforeExit', () => resolve()));
}

/** 0 picks any free port: the URL printed names the one taken. */
function parsePort(value: string): number {
  const port = Number(value);
  if (!/^\d+$/.test(value) || port > 65_535) {
    throw new InvalidArgumentError(
      '--inspect-port must be a whole number from 0 (any free port) to 65535.',
    );
  }
  return port;
}

/** On a terminal, the status line is cleared before the example writes and drawn again after. */
function keepStatusLineClear(progress: ProgressDisplay): () => void {
  if (!process.stderr.isTTY || !process.stdout.isTTY) return () => {};
  const write = process.stdout.write;
  process.stdout.write = function (this: unknown, ...args: unknown[]) {
    progress.clear();
    const result = (write as (...a: unknown[]) => boolean).apply(process.stdout, args);
    progress.redraw();
    return result;
  } as typeof process.stdout.write;
  return () => {
    process.stdout.write = write;
  };
}
