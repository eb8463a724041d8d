import { describe, expect, it } from 'vitest';
import { PerKeyQueue } from '../../../src/durable/stores/per-key-queue.js';

const delay = (ms: number) => new Promise((wait) => setTimeout(wait, ms));

describe('PerKeyQueue', () => {
  it('runs the tasks of one key in queue order, and other keys alongside', async () => {
    const queue = new PerKeyQueue();
    const log: string[] = [];
    const task = (name: string, ms: number) => () => delay(ms).then(() => log.push(name));
    await Promise.all([
      queue.run('a', task('a1', 30)),
      queue.run('a', task('a2', 0)),
      queue.run('b', task('b1', 5)),
    ]);
    expect(log).toEqual(['b1', 'a1', 'a2']);
  });

  it('gives each caller its own outcome: a failed task does not stop the next one', async () => {
    const queue = new PerKeyQueue();
    const failed = queue.run('a', async () => {
      throw new Error('disk full');
    });
    const next = queue.run('a', async () => 'ran');
    await expect(failed).rejects.toThrow('disk full');
    await expect(next).resolves.toBe('ran');
  });
});
