import {
  type ContextMutation,
  compileTurn,
  type Message,
  mutate,
  type PromptContract,
  userMessage,
} from 'statecraft';
import { fmt, medianMicros, type Row } from './measure.js';

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
  const perTurn: Record<number, number> = {};
  // Warm the JIT on the longest run first, so the short runs are not measured half-compiled.
  const warm = Array.from({ length: 1000 }, (_, i) => turnMutations(i));
  for (let i = 0; i < 20; i++) compileRun(warm);
  for (const n of [10, 100, 1000]) {
    const turns = Array.from({ length: n }, (_, i) => turnMutations(i));
    const samples = n >= 1000 ? 31 : 301;
    perTurn[n] = (await medianMicros(() => compileRun(turns), samples)) / n;
    rows.push({ measure: `compileTurn, µs per turn, ${n}-turn run`, value: fmt(perTurn[n]) });
  }
  rows.push({
    measure: 'compileTurn, per-turn cost 1,000 vs 10 turns',
    value: `${fmt((perTurn[1000] as number) / (perTurn[10] as number))}×`,
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
