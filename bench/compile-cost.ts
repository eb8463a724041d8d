import { type Message, userMessage } from 'statecraft';
import { type ContextMutation, compileTurn, mutate, type PromptContract } from 'statecraft/compile';
import { fmt, median, medianMicros, type Row } from './measure.js';

// Compile cost per turn over a whole run: one turn = the model asks for one tool, the tool
// answers, and the next request is compiled. If compiling copied the transcript, the cost
// per turn would grow with the run's length; it must stay flat.

const contract: PromptContract = {
  systemPrompt: 'You are a careful assistant.',
  tools: [{ name: 'lookup', bestPractices: ['Look things up before answering.'] }],
};

function turnMutations(i: number): ContextMutation[] {
  const id = `call_${i}`;
  return [
    mutate.assistantMessage(`Step ${i}: looking it up.`, [
      { id, name: 'lookup', arguments: { q: `item ${i}` } },
    ]),
    mutate.toolResult({
      toolCallId: id,
      name: 'lookup',
      output: { found: i, note: 'x'.repeat(200) },
      success: true,
    }),
  ];
}

function compileRun(turns: readonly ContextMutation[][]): void {
  let turn = compileTurn({ transcript: [userMessage('Go.')], contract });
  for (const mutations of turns) {
    turn = compileTurn({
      transcript: turn.transcript,
      snapshot: turn.snapshot,
      mutations,
      contract,
    });
  }
}

// The seed's pipeline clones the reduced transcript every turn ("no shared references"):
// the same run with that clone added shows what sharing frozen messages saves.
function cloningRun(turns: readonly ContextMutation[][]): void {
  let messages: Message[] = [userMessage('Go.')];
  for (const mutations of turns) {
    const turn = compileTurn({ transcript: messages, mutations, contract });
    messages = structuredClone(turn.transcript.toArray());
  }
}

export async function compileCostRows(): Promise<Row[]> {
  const rows: Row[] = [];
  const sizes = [10, 100, 1000] as const;
  const runs = new Map(
    sizes.map((n) => [n, Array.from({ length: n }, (_, i) => turnMutations(i))]),
  );
  // Warm the JIT on the longest run first, so the short runs are not measured half-compiled.
  for (let i = 0; i < 20; i++) compileRun(runs.get(1000) as ContextMutation[][]);
  // Interleaved rounds, 1,000 turns per size per round, so a slow spell of a shared machine
  // hits every size alike; each sample is one whole run, divided by its turns.
  const samples = new Map<number, number[]>(sizes.map((n) => [n, []]));
  for (let round = 0; round < 15; round++) {
    for (const n of sizes) {
      const turns = runs.get(n) as ContextMutation[][];
      for (let i = 0; i < 1000 / n; i++) {
        const start = process.hrtime.bigint();
        compileRun(turns);
        samples.get(n)?.push(Number(process.hrtime.bigint() - start) / 1000 / n);
      }
    }
  }
  const perTurn = new Map(sizes.map((n) => [n, median(samples.get(n) as number[])]));
  for (const n of sizes) {
    rows.push({
      measure: `compileTurn, µs per turn, ${n}-turn run`,
      value: fmt(perTurn.get(n) as number),
    });
  }
  rows.push({
    measure: 'compileTurn, per-turn cost 1,000 vs 10 turns',
    value: `${fmt((perTurn.get(1000) as number) / (perTurn.get(10) as number))}×`,
    note: '≈1× means total cost linear in turns',
  });
  for (const n of [10, 100, 1000]) {
    const turns = Array.from({ length: n }, (_, i) => turnMutations(i));
    const micros = (await medianMicros(() => cloningRun(turns), n >= 1000 ? 3 : 20, 1)) / n;
    rows.push({
      measure: `reference: clone transcript each turn, ${n}-turn run`,
      value: fmt(micros),
      note: 'µs per turn; grows with n',
    });
  }
  return rows;
}
