#!/usr/bin/env node
import { CommanderError } from 'commander';
import { debugStack } from './cli-error.js';
import { createProgram } from './program.js';

// Entry point of the `statecraft` bin. Every failure ends with one line on stderr and exit
// code 1: commander reports usage mistakes itself; a CliError is a mistake in what the
// command points at; anything else is reported by its message, never as a crash dump.
// STATECRAFT_DEBUG=1 adds the stack: of the error itself, or of what a CliError wraps (the
// exception a user's module or script threw).

async function main(argv: readonly string[]): Promise<number> {
  const program = createProgram();
  try {
    await program.parseAsync([...argv]);
    return 0;
  } catch (error) {
    if (error instanceof CommanderError) {
      // Help and --version "fail" with exit code 0; usage errors were printed already.
      return error.exitCode === 0 ? 0 : 1;
    }
    const command = program.args[0] ? ` ${program.args[0]}` : '';
    const message = error instanceof Error ? error.message : String(error);
    process.stderr.write(`statecraft${command}: ${message}\n`);
    if (process.env.STATECRAFT_DEBUG) {
      const stack = debugStack(error);
      if (stack) process.stderr.write(`${stack}\n`);
    }
    return 1;
  }
}

// Only a failure sets the exit code: what the command ran (`statecraft run` a CI script that
// sets process.exitCode = 3) keeps the code it set.
const code = await main(process.argv);
if (code !== 0) process.exitCode = code;
