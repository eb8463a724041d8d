import { spawn } from 'node:child_process';
import { childEnv } from './npm.js';

/**
 * Runs `statecraft view <script> --port 0 --no-open` in `cwd`, fetches `paths` from the URL it
 * prints, and stops it: the viewer page as the installed package serves it. Bounded: the
 * server must print its URL within `timeoutMs`; the process is killed whatever happens.
 */
export async function fetchFromViewer(
  bin: string,
  script: string,
  cwd: string,
  paths: readonly string[],
  timeoutMs = 60_000,
): Promise<Map<string, { status: number; body: string }>> {
  const child = spawn(bin, ['view', script, '--port', '0', '--no-open'], {
    cwd,
    env: childEnv(),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  let output = '';
  try {
    const url = await new Promise<string>((found, failed) => {
      const timer = setTimeout(
        () => failed(new Error(`statecraft view printed no URL in ${timeoutMs} ms:\n${output}`)),
        timeoutMs,
      );
      const read = (chunk: Buffer) => {
        output += chunk.toString();
        const match = /http:\/\/127\.0\.0\.1:\d+\//.exec(output);
        if (match) {
          clearTimeout(timer);
          found(match[0]);
        }
      };
      child.stdout.on('data', read);
      child.stderr.on('data', read);
      child.once('exit', (code) => {
        clearTimeout(timer);
        failed(new Error(`statecraft view exited (${code}) before serving:\n${output}`));
      });
    });
    const pages = new Map<string, { status: number; body: string }>();
    for (const path of paths) {
      const response = await fetch(new URL(path.slice(1), url), {
        signal: AbortSignal.timeout(timeoutMs),
      });
      pages.set(path, { status: response.status, body: await response.text() });
    }
    return pages;
  } finally {
    child.kill('SIGTERM');
    await exited;
  }
}
