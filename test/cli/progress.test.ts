// The progress display of `statecraft run`, fed the RunObserver events a real chain run
// reports: plain lines for a pipe, one status line redrawn in place on a terminal.
import { createChain, defineTool } from 'statecraft';
import { ScriptedModel } from 'statecraft/testing';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ProgressDisplay, type ProgressOutput } from '../../src/cli/progress.js';

class Capture implements ProgressOutput {
  text = '';
  constructor(
    readonly isTTY: boolean,
    readonly columns = 200,
  ) {}
  write(chunk: string) {
    this.text += chunk;
    return true;
  }
}

const add = defineTool({
  name: 'add',
  description: 'Adds two numbers.',
  input: z.object({ a: z.number(), b: z.number() }),
  execute: ({ a, b }) => a + b,
});

async function runWith(progress: ProgressDisplay) {
  const model = new ScriptedModel([
    { toolCalls: [{ name: 'add', arguments: { a: 2, b: 3 } }] },
    { text: 'The sum is 5.' },
  ]);
  const chain = createChain({ model, tools: [add], name: 'adder' });
  return chain.invoke('What is 2 + 3?', { observers: progress });
}

describe('ProgressDisplay', () => {
  it('writes one plain line per state change, model call, tool call and run end', async () => {
    const out = new Capture(false);
    const progress = new ProgressDisplay(out);
    const result = await runWith(progress);
    const lines = out.text.trimEnd().split('\n');
    expect(lines[0]).toBe('adder#1 started on scripted/scripted-model');
    expect(lines.filter((l) => / (thinking|doing|validating|succeeded)$/.test(l))).toEqual([
      'adder#1 thinking',
      'adder#1 doing',
      'adder#1 thinking',
      'adder#1 validating',
      'adder#1 succeeded',
    ]);
    expect(lines).toContain('adder#1 tool add → ok');
    const tokens = result.usage.totalTokens;
    expect(lines.at(-1)).toMatch(
      new RegExp(`^adder#1 done \\(2 model calls, 1 tool call, ${tokens} tokens, \\d+\\.\\d s\\)$`),
    );
    expect(out.text).not.toContain('\r');
    expect(progress.summary()).toBe(`1 run, 2 model calls, 1 tool call, ${tokens} tokens`);
  });

  it('on a terminal redraws one status line and keeps only the run end', async () => {
    const out = new Capture(true);
    const progress = new ProgressDisplay(out);
    await runWith(progress);
    // Every update starts by going back to the line's start and clearing it.
    const frames = out.text.split('\r\x1b[2K').filter(Boolean);
    expect(frames.some((f) => f.startsWith('adder#1 doing · 1 model call · '))).toBe(true);
    // The lines that stay are the ones ending in a newline: only the run's end.
    expect(frames.filter((f) => f.endsWith('\n'))).toEqual([
      expect.stringMatching(/^adder#1 done \(2 model calls, 1 tool call, \d+ tokens/),
    ]);
    // Nothing is left of the status line once the run is over.
    expect(out.text.endsWith('\n')).toBe(true);
  });

  it('cuts the status line to the terminal width', async () => {
    const out = new Capture(true, 30);
    await runWith(new ProgressDisplay(out));
    const frames = out.text.split('\r\x1b[2K').filter((f) => f && !f.endsWith('\n'));
    expect(frames.length).toBeGreaterThan(0);
    for (const frame of frames) expect(frame.length).toBeLessThanOrEqual(29);
  });
});
