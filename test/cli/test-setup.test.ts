// scripts/test-setup.sh, what `npm test` (and so .ci/run) runs first: it installs Debian's
// Chromium for the browser tests when it is missing and this user may (root, or sudo with no
// password), bounded in time; otherwise it says how in one line and lets the tests go on.
// Each case runs the script with PATH holding stand-ins only (id, sudo, apt-get, timeout), so no
// apt-get ever runs here; the stand-ins write what they were asked into a log.
import { execFile } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';

const SCRIPT = resolve('scripts/test-setup.sh');

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

interface Machine {
  /** What `id -u` says. */
  readonly uid: number;
  /** Whether there is a sudo, and whether it needs a password. */
  readonly sudo?: 'none' | 'password' | 'no-password';
  readonly aptGet?: 'none' | 'installs' | 'succeeds-without-installing' | 'fails';
  /** Whether the browser is already there. */
  readonly chromium?: boolean;
}

interface Outcome {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
  /** What the stand-ins were asked, one line each. */
  readonly log: string[];
  readonly ms: number;
  /** What the script left in the directory it ran in. */
  readonly leftBehind: string[];
}

function stand(dir: string, name: string, body: string): void {
  const path = join(dir, name);
  writeFileSync(path, `#!/bin/sh\n${body}\n`);
  chmodSync(path, 0o755);
}

async function runSetup(machine: Machine): Promise<Outcome> {
  const dir = mkdtempSync(join(tmpdir(), 'statecraft-test-setup-'));
  dirs.push(dir);
  const bin = join(dir, 'bin');
  const cwd = join(dir, 'cwd');
  const log = join(dir, 'log');
  const chromium = join(dir, 'chromium');
  for (const sub of [bin, cwd]) mkdirSync(sub);
  if (machine.chromium) stand(dir, 'chromium', 'exit 0');
  const record = (what: string) => `echo "${what}" >> '${log}'`;
  stand(bin, 'id', `echo ${machine.uid}`);
  // Bounds what it runs: records the bound, then runs it (unbounded: nothing here waits).
  stand(bin, 'timeout', `${record('timeout $1 $2 $3 $4')}\nshift 4\nexec "$@"`);
  stand(bin, 'env', `${record('env $1')}\nexport "$1"\nshift\nexec "$@"`);
  if (machine.sudo === 'password' || machine.sudo === 'no-password') {
    const allowed = machine.sudo === 'no-password';
    stand(
      bin,
      'sudo',
      `${record('sudo $*')}\n[ "$1" = -n ] || exit 9\n${allowed ? 'shift\n"$@"' : 'echo "sudo: a password is required" >&2\nexit 1'}`,
    );
  }
  const aptGet = machine.aptGet ?? 'installs';
  if (aptGet !== 'none') {
    const install =
      aptGet === 'installs'
        ? `[ "$1" = install ] && printf '#!/bin/sh\\n' > '${chromium}' && /bin/chmod +x '${chromium}'`
        : '';
    stand(
      bin,
      'apt-get',
      `${record('apt-get $* (DEBIAN_FRONTEND=$DEBIAN_FRONTEND, uid $(id -u))')}\n${install}\nexit ${aptGet === 'fails' ? 100 : 0}`,
    );
  }
  const started = performance.now();
  return new Promise((done) => {
    execFile(
      '/bin/sh',
      [SCRIPT],
      { cwd, env: { PATH: bin, STATECRAFT_TEST_SETUP_CHROMIUM: chromium }, timeout: 20_000 },
      (error, stdout, stderr) =>
        done({
          code: error ? (typeof error.code === 'number' ? error.code : null) : 0,
          stdout,
          stderr,
          log: existsSync(log) ? readFileSync(log, 'utf8').trim().split('\n') : [],
          ms: performance.now() - started,
          leftBehind: readdirSync(cwd),
        }),
    );
  });
}

describe('scripts/test-setup.sh (npm test, .ci/run)', () => {
  it('does nothing, quickly, when Chromium is there', async () => {
    const outcome = await runSetup({ uid: 0, chromium: true });
    expect(outcome).toMatchObject({ code: 0, stdout: '', stderr: '', log: [], leftBehind: [] });
    expect(outcome.ms).toBeLessThan(10_000); // a file test; generous for a loaded machine
  });

  it('as root, installs it with apt-get, non-interactive and bounded in time', async () => {
    const outcome = await runSetup({ uid: 0 });
    expect(outcome.code).toBe(0);
    expect(outcome.stdout).toBe('');
    expect(outcome.stderr).toMatch(
      /^test-setup: \S+chromium is missing: installing Debian's chromium \(apt-get install chromium\)\n$/,
    );
    expect(outcome.log).toEqual([
      'timeout --foreground -k 10 120',
      'env DEBIAN_FRONTEND=noninteractive',
      'apt-get update -q (DEBIAN_FRONTEND=noninteractive, uid 0)',
      'timeout --foreground -k 10 900',
      'env DEBIAN_FRONTEND=noninteractive',
      'apt-get install -y -q --no-install-recommends chromium (DEBIAN_FRONTEND=noninteractive, uid 0)',
    ]);
    expect(outcome.leftBehind).toEqual([]);
  });

  it('not root: installs it through sudo -n when sudo needs no password', async () => {
    const outcome = await runSetup({ uid: 1000, sudo: 'no-password' });
    expect(outcome.code).toBe(0);
    expect(outcome.stderr).toContain('(sudo -n apt-get install chromium)');
    expect(outcome.log).toEqual([
      'sudo -n true',
      'timeout --foreground -k 10 120',
      'sudo -n env DEBIAN_FRONTEND=noninteractive apt-get update -q',
      'env DEBIAN_FRONTEND=noninteractive',
      'apt-get update -q (DEBIAN_FRONTEND=noninteractive, uid 1000)',
      'timeout --foreground -k 10 900',
      'sudo -n env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends chromium',
      'env DEBIAN_FRONTEND=noninteractive',
      'apt-get install -y -q --no-install-recommends chromium (DEBIAN_FRONTEND=noninteractive, uid 1000)',
    ]);
  });

  it.each([
    ['not root and no sudo', { uid: 1000, sudo: 'none' }, 'not root, no password-free sudo'],
    [
      'not root, sudo asks for a password',
      { uid: 1000, sudo: 'password' },
      'not root, no password-free sudo',
    ],
    ['no apt-get (not Debian)', { uid: 0, aptGet: 'none' }, 'there is no apt-get here'],
  ] as const)(
    '%s: says how in one line, installs nothing, and lets the tests go on',
    async (_, machine, why) => {
      const outcome = await runSetup(machine);
      expect(outcome.code).toBe(0);
      expect(outcome.stdout).toBe('');
      expect(outcome.stderr.split('\n')).toEqual([
        expect.stringMatching(
          /^test-setup: \S+chromium is missing .+: install Debian's chromium \(sudo apt-get install chromium\), or the browser tests fail$/,
        ),
        '',
      ]);
      expect(outcome.stderr).toContain(why);
      expect(outcome.log.filter((line) => line.startsWith('apt-get'))).toEqual([]);
    },
  );

  it('says so in one more line when apt-get fails, and still exits 0', async () => {
    const failed = await runSetup({ uid: 0, aptGet: 'fails' });
    expect(failed.code).toBe(0);
    expect(failed.stderr.trim().split('\n')).toHaveLength(2);
    expect(failed.stderr).toMatch(/chromium is missing \(apt-get failed or timed out\): install/);
    const notInstalled = await runSetup({ uid: 0, aptGet: 'succeeds-without-installing' });
    expect(notInstalled.code).toBe(0);
    expect(notInstalled.stderr).toMatch(/chromium is missing after apt-get installed chromium/);
  });
});
