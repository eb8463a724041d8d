import type { ChainConfig, ChainInput } from '../../../machines/chain.js';
import { userMessage } from '../../messages.js';

// The chain configurations and input the chain is walked under: one copy for `statecraft
// paths` (chain-walk.ts) and the project's own path suite (test/machines/chain-graph.ts),
// so the CLI's walks and the suite cannot drift apart. It lives here, not under test/,
// because src/ never imports from test/.

// Token sizes, against maxTokens 100 and a token warning at 50 (100 - 50): one tool-call
// response crosses the warning but not the limit, two cross the limit, a huge one crosses it
// at once, and an answer is cheap.
export const TOOL_CALL_TOKENS = 60;
export const ANSWER_TOKENS = 10;
export const HUGE_TOKENS = 1_000;

/** Small limits keep the graph small; both warnings are negative (distance from the limit). */
export const PATH_CONFIG: ChainConfig = {
  maxIterations: 2,
  maxTokens: 100,
  warnings: {
    // warns before generation 2 (2 - 1), i.e. on every way back to `preparing`
    iterations: { prompt: 'One generation left: answer now.', threshold: -1 },
    tokens: { prompt: 'The token budget is nearly spent.', threshold: -50 },
  },
  toolResponseInstructions: { text: 'Use the tool results.', when: 'always' },
  warnRecursiveCalls: true,
  duplicateWarnTools: ['lookup'],
  returnDirectTools: [],
  catchIntermediateResult: true,
  resultCacheKey: 'answer',
  contract: { baseInstruction: 'You answer questions.' },
};

/** A time limit the clock never reaches in a walk: traversal and replay fire it as an event. */
export const TIME_LIMIT_MS = 60_000;

/**
 * The configurations the paths are walked under (SPEC R4 on top of C): each adds the states
 * and guards of one option. `exactBudget` spends the budget exactly (one tool call costs
 * 60), the only way to the token branches that follow a response within budget.
 */
export const PATH_CONFIGS = {
  base: PATH_CONFIG,
  timeLimit: { ...PATH_CONFIG, maxExecutionTime: TIME_LIMIT_MS },
  force: { ...PATH_CONFIG, maxExecutionTime: TIME_LIMIT_MS, earlyStopping: 'force' },
  generate: { ...PATH_CONFIG, maxExecutionTime: TIME_LIMIT_MS, earlyStopping: 'generate' },
  returnDirect: { ...PATH_CONFIG, returnDirectTools: ['lookup'] },
  exactBudget: {
    ...PATH_CONFIG,
    maxTokens: TOOL_CALL_TOKENS,
    maxExecutionTime: TIME_LIMIT_MS,
    earlyStopping: 'generate',
    returnDirectTools: ['lookup'],
  },
  // SPEC H2: the machine cannot tell which tools need approval (the host asks); walks whose
  // config names a deadline policy offer the host's approval events and people's decisions.
  approval: { ...PATH_CONFIG, approvalTimeout: 'reject' },
  approvalFail: { ...PATH_CONFIG, maxExecutionTime: TIME_LIMIT_MS, approvalTimeout: 'fail' },
} as const satisfies Record<string, ChainConfig>;

/** Whether a walk under `config` offers approval events (see PATH_CONFIGS.approval). */
export function walksApprovals(config: ChainConfig): boolean {
  return config.approvalTimeout !== undefined;
}

export type PathConfigName = keyof typeof PATH_CONFIGS;

export function pathInput(config: ChainConfig = PATH_CONFIG): ChainInput {
  return { config, messages: [userMessage('What is the capital of France?')] };
}
