// Runs every scan statecraft makes over model or tool output on 1 MB inputs built to make a
// backtracking regex quadratic (SPEC Q1). Run as a child process by linear-scans.test.ts, which
// kills it after a bound: a quadratic scan blocks its event loop, so no in-process timeout
// could end it. Prints `start <name>` before and `done <name> <ms>` after each case.
import { geminiMalformedCall } from '../../adapters/models/gemini/response.js';
import { oneLine } from '../../src/cli/progress.js';
import { compileTurn, convertToLlmRequest, mutate, stripBlocks } from '../../src/compile.js';
import { systemMessage, Transcript } from '../../src/index.js';
import { jsonCandidates } from '../../src/model.js';

const MB = 1 << 20;
const letters = 'a'.repeat(MB);
const spaces = ' '.repeat(MB);
// Compiles a turn whose only message is this system prompt, without a snapshot: the
// experiences in it are read back.
const readBack = (prompt: string) =>
  convertToLlmRequest({
    transcript: Transcript.from([systemMessage(prompt)]),
    snapshot: undefined,
  });

export const CASES: Record<string, () => unknown> = {
  'jsonCandidates: unclosed fence': () => [...jsonCandidates(`\`\`\`${letters}`)],
  'jsonCandidates: fence, language tag, no close': () => [
    ...jsonCandidates(`\`\`\`json\n${letters}`),
  ],
  'jsonCandidates: many closed fences': () => [...jsonCandidates('```x```'.repeat(MB / 7))],
  'jsonCandidates: unclosed brackets': () => [...jsonCandidates('{['.repeat(MB / 2))],
  'jsonCandidates: unclosed string in an object': () => [...jsonCandidates(`{"${letters}`)],
  'stripBlocks: a run of spaces': () => stripBlocks(`${spaces}x`),
  'stripBlocks: openings that never close': () => stripBlocks('<experiences> '.repeat(MB / 14)),
  'stripBlocks: a closed block after spaces': () =>
    stripBlocks(`${spaces}<must_principles>a</must_principles>${spaces}`),
  'experience read-back: one line of digits': () =>
    readBack(`<experiences>\n[${'1'.repeat(MB)}\n</experiences>`),
  'experience read-back: many short experiences': () =>
    readBack(`<experiences>\n${'[1] a\n'.repeat(MB / 6)}</experiences>`),
  'tool best practices: runs of spaces': () =>
    convertToLlmRequest(
      { transcript: Transcript.empty, snapshot: undefined },
      { tools: [{ name: 't', description: `${spaces}x`, bestPractices: [`x${spaces}y`] }] },
    ),
  // Not a text scan, but the same hazard: each append's linkage check looks back over the
  // current step only; looking back to the last assistant message made this quadratic.
  'compileTurn: 100,000 user messages in one turn': () =>
    compileTurn({
      transcript: [],
      mutations: Array.from({ length: 100_000 }, (_, i) => mutate.userMessage(`m${i}`)),
    }),
  'oneLine: a run of spaces': () => oneLine(`${spaces}x`),
  'gemini malformed call name': () =>
    geminiMalformedCall({
      finishReason: 'MALFORMED_FUNCTION_CALL',
      finishMessage: `print(${spaces}`,
    } as never),
};

const only = process.argv[2];
for (const [name, run] of Object.entries(CASES)) {
  if (only && name !== only) continue;
  process.stdout.write(`start ${name}\n`);
  const started = performance.now();
  run();
  process.stdout.write(`done ${name} ${(performance.now() - started).toFixed(1)}\n`);
}
