import type { ChildProcess } from 'node:child_process';

/** A child process's output as it comes: its stdout lines, its stderr, and its end. */
export interface ChildOutput {
  /** Complete stdout lines so far (grows). */
  readonly lines: string[];
  stderr(): string;
  /** The signal or exit code it ended with. */
  readonly exited: Promise<NodeJS.Signals | number | null>;
  /** Resolves once `lines` satisfy `check`; rejects, with its stderr, if it exits first. */
  until(check: (lines: readonly string[]) => boolean, what: string): Promise<void>;
}

/** Reads `child`'s stdout line by line (it must be spawned with stdout and stderr piped). */
export function childOutput(child: ChildProcess): ChildOutput {
  const lines: string[] = [];
  let pending = '';
  let stderr = '';
  const waiters = new Set<() => void>();
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  child.stdout?.on('data', (chunk: Buffer) => {
    pending += chunk.toString();
    const parts = pending.split('\n');
    pending = parts.pop() ?? '';
    lines.push(...parts);
    for (const waiter of waiters) waiter();
  });
  const exited = new Promise<NodeJS.Signals | number | null>((resolve) => {
    child.on('exit', (code, signal) => resolve(signal ?? code));
  });
  const until = (check: (lines: readonly string[]) => boolean, what: string) =>
    new Promise<void>((resolve, reject) => {
      if (check(lines)) return resolve();
      const waiter = () => {
        if (!check(lines)) return;
        waiters.delete(waiter);
        resolve();
      };
      waiters.add(waiter);
      void exited.then(() => {
        waiters.delete(waiter);
        reject(new Error(`child exited before ${what}; stderr:\n${stderr}`));
      });
    });
  return { lines, stderr: () => stderr, exited, until };
}
