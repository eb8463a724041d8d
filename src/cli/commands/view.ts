import { type Command, InvalidArgumentError } from 'commander';
import { observeRuns } from '../../observe/registry.js';
import { DEFAULT_VIEWER_PORT, startViewer } from '../../viewer/server.js';
import { debugStack } from '../cli-error.js';
import { availableExamples, exampleArgument, findExample } from '../find-example.js';
import { importModule } from '../load-export.js';
import { openBrowser } from '../open-browser.js';

// `statecraft view <example>`: the local run viewer (SPEC X4). It serves the page on
// 127.0.0.1, observes every run in this process, and runs the example (or any script) here, so
// its runs stream into the page. The script is required: the viewer sees the runs of its own
// process only. It stays up until Ctrl-C, so the page can still be looked at after the
// script ends, or fails: a failing run is what a user most wants to see, so a script that
// throws (at once, or later from a run it did not await) is reported and the viewer serves on;
// the exit code is then 1. `--exit` closes it once the script is done (scripts, CI): once the
// process has nothing left to do, since a script that calls `main()` without `await` has its
// runs start after its import resolves.

interface ViewOptions {
  readonly port: number;
  readonly open: boolean;
  readonly exit: boolean;
}

export function viewCommand(program: Command): void {
  const examples = availableExamples();
  program
    .command('view')
    .description(
      'serve the run viewer on 127.0.0.1: each run’s machine with its path lit up live, and a timeline of its model and tool calls',
    )
    .argument('<example>', `what to run and watch: ${exampleArgument(examples)}`)
    .argument('[args...]', "the example's own arguments, after --")
    .option(
      '-p, --port <port>',
      'port to listen on; 0 picks a free one',
      parsePort,
      DEFAULT_VIEWER_PORT,
    )
    .option('--no-open', 'print the URL without opening a browser')
    .option('--exit', 'close once the script has finished, instead of waiting for Ctrl-C')
    .addHelpText(
      'after',
      [
        '',
        'The page shows every chain, tool loop and Runnable run the script makes, live. It',
        'works offline: Mermaid is served from node_modules. A script that fails is reported',
        'and its runs stay on the page; the exit code is then 1.',
        '',
        'Examples:',
        `  statecraft view ${examples.includes('research-loop') ? 'research-loop' : './my-agent.ts'}`,
        '  statecraft view ./my-agent.ts --port 0 --no-open --exit',
      ].join('\n'),
    )
    .action(async (example: string, args: string[], options: ViewOptions) => {
      // Found before anything starts: a misspelt example is an error, not an empty viewer.
      const path = findExample(example);
      const viewer = await startViewer({ port: options.port });
      const stopObserving = observeRuns(viewer.observer);
      process.stdout.write(`statecraft view: ${viewer.url}\n`);
      if (options.open) openBrowser(viewer.url, 'statecraft view');
      let failed = false;
      const scriptFailed = (error: unknown) => {
        failed = true;
        const message = error instanceof Error ? error.message : String(error);
        process.stderr.write(`statecraft view: the script failed: ${message}\n`);
        const stack = process.env.STATECRAFT_DEBUG ? debugStack(error) : undefined;
        if (stack) process.stderr.write(`${stack}\n`);
      };
      // While the viewer is up, what the script throws later is its failure, not the viewer's end.
      process.on('uncaughtException', scriptFailed);
      process.on('unhandledRejection', scriptFailed);
      try {
        // The script reads its own arguments from process.argv, as when it runs by itself.
        const argv = process.argv;
        process.argv = [argv[0] ?? 'node', path, ...args];
        try {
          await importModule(path, (message) => message);
        } catch (error) {
          scriptFailed(error);
        } finally {
          process.argv = argv;
        }
        if (options.exit) {
          // Its import may resolve before its runs start (`main()` without `await`): serve
          // until the process has nothing else to do, the viewer itself aside.
          viewer.unref();
          await idle();
          if (!failed) process.stderr.write(`statecraft view: ${example} finished\n`);
        } else {
          process.stderr.write('statecraft view: serving until Ctrl-C\n');
          await interrupted();
        }
      } finally {
        process.off('uncaughtException', scriptFailed);
        process.off('unhandledRejection', scriptFailed);
        stopObserving();
        await viewer.close();
      }
      if (failed) process.exitCode = 1;
    });
}

function parsePort(value: string): number {
  const port = Number(value);
  if (!/^\d+$/.test(value) || port > 65_535) {
    throw new InvalidArgumentError('--port must be a whole number from 0 to 65535.');
  }
  return port;
}

/** Resolves when the process has no more work that would keep it alive (`beforeExit`). */
function idle(): Promise<void> {
  return new Promise((resolve) => process.once('beforeExit', () => resolve()));
}

/** Resolves on Ctrl-C (or SIGTERM), so the viewer closes cleanly and the process can end. */
function interrupted(): Promise<void> {
  return new Promise((resolve) => {
    const stop = () => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      resolve();
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
}
