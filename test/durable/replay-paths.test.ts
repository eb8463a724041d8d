// Replay determinism over every path of the chain path suite (SPEC D2 paths, durable runs):
// each path that ends in a final state is run live with a journaling effects host, then
// resumed from a crash after every entry of its journal. The resumed run must rest where the
// path says once the journal is replayed, end in the same final state with the same output,
// write the same journal, and have its journal accept the end.
import { afterAll, describe, expect, it } from 'vitest';
import { type ChainEvent, chainMachine } from '../../machines/chain.js';
import { walksApprovals } from '../../src/cli/walks/chain-configs.js';
import { encode } from '../../src/durable/codec.js';
import type { JournalEntry } from '../../src/durable/journal-entry.js';
import { delayedEventType } from '../../src/host/durable-run.js';
import {
  type ChainPath,
  PATH_CONFIGS,
  pathName,
  simplePaths,
  TIME_LIMIT_EVENT,
} from '../machines/chain-graph.js';
import { json } from '../machines/graph-kit.js';
import { pathEvents, type RunResult, resume, runLive, type Tamper } from './replay-host.js';

// The path suite's own walks: every configuration, every simple path. The ones that do not end
// in a final state are prefixes of ones that do (the suite checks it), so the final paths
// cover them all; a crash point's run goes on to the final state the uncrashed one reached.
// Approval walks are left out: their host events (requests, deadlines) and people's decisions
// are journaled by the approval gate, which this harness does not stand in for; the kill -9
// tests of approvals (kill-approval.test.ts) replay those journals instead.
const walks = Object.entries(PATH_CONFIGS)
  .filter(([, config]) => !walksApprovals(config))
  .map(([name, config]) => ({
    name,
    config,
    finalPaths: simplePaths(chainMachine, config).filter((path) => path.state.status === 'done'),
  }));
const totalPaths = walks.reduce((n, w) => n + w.finalPaths.length, 0);

const checked = { paths: 0, crashPoints: 0, byEntry: {} as Record<string, number> };

/** Adds where it happened to whatever `run` throws. */
async function at<T>(where: string, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    if (error instanceof Error) error.message = `${where}: ${error.message}`;
    throw error;
  }
}

/** The uncrashed run of a path, checked against the path itself. */
async function uncrashed(path: ChainPath, config: (typeof walks)[0]['config']): Promise<RunResult> {
  const live = await at('uncrashed run', () => runLive(path, config));
  const { snapshot, entries } = live;
  expect(snapshot.value).toEqual(path.state.value);
  expect(json(snapshot.output), 'output').toEqual(json(path.state.output));
  // One journaled delivery per path event: an answer, a call's result, an ABORT, or the timer
  // firing.
  const delivered = entries.filter((e) => ['answer', 'result', 'abort', 'timer'].includes(e.type));
  expect(delivered.length, 'deliveries journaled').toBe(pathEvents(path).length);
  expect(entries[0]?.type).toBe('start');
  expect(entries.at(-1)).toEqual({ type: 'end', status: snapshot.output?.status });
  return live;
}

/** A crash after `count` entries, resumed: the same end, the same output, the same journal. */
async function resumedAlike(
  path: ChainPath,
  config: (typeof walks)[0]['config'],
  live: RunResult,
  count: number,
  tamper?: Tamper,
): Promise<void> {
  const { entries } = live;
  const crash = `crash after entry ${count} of ${entries.length} (${entries[count - 1]?.type})`;
  await at(crash, async () => {
    const resumed = await resume(path, config, entries, count, tamper);
    expect(resumed.snapshot.value, 'final state').toEqual(live.snapshot.value);
    expect(encode(resumed.snapshot.output), 'output').toStrictEqual(encode(live.snapshot.output));
    expect(resumed.entries, 'journal after the resumed run').toEqual(entries);
  });
}

describe(`replay determinism: ${totalPaths} final paths of the chain path suite, a crash after every journal entry`, () => {
  it('delivers the time limit as the event the path suite sends', () => {
    expect(delayedEventType(chainMachine, 'maxExecutionTime')).toBe(TIME_LIMIT_EVENT);
  });

  for (const { name, config, finalPaths } of walks) {
    describe(name, () => {
      for (const path of finalPaths) {
        it(pathName(path), async () => {
          const live = await uncrashed(path, config);
          for (let count = 1; count <= live.entries.length; count++) {
            await resumedAlike(path, config, live, count);
            const last = (live.entries[count - 1] as JournalEntry).type;
            checked.byEntry[last] = (checked.byEntry[last] ?? 0) + 1;
            checked.crashPoints++;
          }
          checked.paths++;
        });
      }
    });
  }

  afterAll(() => {
    console.log(
      `replay-paths: ${checked.paths} of ${totalPaths} paths, ${checked.crashPoints} (path, crash point) pairs; ` +
        `crash after: ${JSON.stringify(checked.byEntry)}`,
    );
  });

  it('checked every final path of every configuration', () => {
    // Last in this file: the per-path tests above ran before it.
    expect(walks.map((w) => w.name)).toEqual(
      Object.keys(PATH_CONFIGS).filter((name) => !name.startsWith('approval')),
    );
    // 38 + 48 + 55 + 265 + 91 + 77 + 36 + 53 + 53: the suite's final paths
    expect(totalPaths).toBe(716);
    expect(checked.paths).toBe(totalPaths);
    // Every kind of entry is a crash point somewhere.
    expect(Object.keys(checked.byEntry).sort()).toEqual([
      'abort',
      'answer',
      'end',
      'request',
      'result',
      'start',
      'timer',
    ]);
    expect(checked.crashPoints).toBeGreaterThan(4 * totalPaths);
  });
});

describe('the checks fail when replay is broken', () => {
  // The host delivers a wrong answer for the first effect it replays: an error, of the effect
  // that was asked for, that no path answers with.
  const wrongFirstAnswer = (): Tamper => {
    let first = true;
    return (event, request) => {
      if (!first) return event;
      first = false;
      return { type: `${request.type}.error`, error: new Error('tampered') } as ChainEvent;
    };
  };
  const { config, finalPaths } = walks[0] as (typeof walks)[0];

  it('at every crash point after a journaled answer, on every base path', async () => {
    let failed = 0;
    for (const path of finalPaths) {
      const live = await uncrashed(path, config);
      const firstAnswer = live.entries.findIndex((e) => e.type === 'answer');
      if (firstAnswer < 0) continue;
      for (let count = firstAnswer + 1; count <= live.entries.length; count++) {
        await expect(
          resumedAlike(path, config, live, count, wrongFirstAnswer()),
          `${pathName(path)}, crash after entry ${count}`,
        ).rejects.toThrow();
        failed++;
      }
    }
    expect(failed).toBeGreaterThan(finalPaths.length);
  });
});
