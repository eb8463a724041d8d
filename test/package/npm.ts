import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);

/**
 * The environment for an npm or node child: this process's, without the `npm_*` variables
 * `npm test` sets for its script (the repository's prefix, package and lifecycle), which would
 * otherwise reach npm run in a scratch project as configuration. The cache stays: a scratch
 * install reads the cache the repository's install filled.
 */
export function childEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (!/^npm_/i.test(key) || key.toLowerCase() === 'npm_config_cache') env[key] = value;
  }
  return env;
}

/** Runs a command to its end (bounded), with its output in the error when it fails. */
export async function exec(
  file: string,
  args: readonly string[],
  options: { cwd: string; timeoutMs?: number; env?: NodeJS.ProcessEnv },
): Promise<{ stdout: string; stderr: string }> {
  try {
    return await run(file, args, {
      cwd: options.cwd,
      env: { ...childEnv(), ...options.env },
      timeout: options.timeoutMs ?? 120_000,
      maxBuffer: 64 * 1024 * 1024,
    });
  } catch (error) {
    const { stdout, stderr } = error as { stdout?: string; stderr?: string };
    throw new Error(
      `${file} ${args.join(' ')} (in ${options.cwd}) failed: ${(error as Error).message}\n${stdout ?? ''}\n${stderr ?? ''}`,
    );
  }
}

/** npm, run with the same Node as the tests. */
export function npm(args: readonly string[], options: { cwd: string; timeoutMs?: number }) {
  return exec('npm', ['--no-audit', '--no-fund', '--no-update-notifier', ...args], options);
}
