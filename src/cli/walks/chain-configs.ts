import type { ChainConfig, ChainInput } from '../../../machines/chain.js';
import { userMessage } from '../../messages.js';
import type { Usage } from '../../usage.js';

// The chain configurations and input the chain is walked under: one copy for `statecraft
// paths` (chain-walk.ts) and the project's own path suite (test/machines/chain-graph.ts),
// so the CLI's walks and the suite cannot drift apart. It lives here, not under test/,
// because src/ never imports from test/.

// Token sizes, against maxTokens 120 and a token warning at 60 (120 - 60): one tool-call
// response crosses the warning but not the limit, two cross the limit, a huge one crosses it
// at once, and an answer is cheap. A call's check before it is made (SPEC H3) expects the
// previous call's input (1 token), a quarter of the characters added since (about 35 after a
// tool step) and `maxOutputTokens`: 5 here, so the next call fits after one tool call.
export const TOOL_CALL_TOKENS = 61;
export const ANSWER_TOKENS = 10;
export const HUGE_TOKENS = 1_000;
/** Two calls for the maxToolCalls walks, cheap enough that the final call fits. */
export const CHEAP_CALLS_TOKENS = 20;

/** A response's usage: one token of input, the rest output, so estimates stay small. */
export function usageOf(totalTokens: number): Usage {
  return { inputTokens: 1, outputTokens: totalTokens - 1, totalTokens };
}

/** Small limits keep the graph small; both warnings are negative (distance from the limit). */
export const PATH_CONFIG: ChainConfig = {
  maxIterations: 2,
  maxTokens: 120,
  maxOutputTokens: 5,
  warnings: {
    // warns before generation 2 (2 - 1), i.e. on every way back to `preparing`
    iterations: { prompt: 'One generation left: answer now.', threshold: -1 },
    tokens: { prompt: 'The token budget is nearly spent.', threshold: -60 },
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
 * SPEC H3's walks: one tool call allowed, and 30 output tokens reserved, so that the call
 * after a tool step does not fit maxTokens (checked before it is made), while the final
 * call after two cheap calls does.
 */
const TOOL_BUDGET: ChainConfig = { ...PATH_CONFIG, maxToolCalls: 1, maxOutputTokens: 30 };

/**
 * The configurations the paths are walked under (SPEC R4 and H3 on top of C): each adds the
 * states and guards of one option. `exactBudget` spends the budget exactly (one tool call
 * costs 61), the only way to the token branches that follow a response within budget.
 * `costBudget` prices a token at a dollar: its cost, not its tokens, is what runs out.
 */
export const PATH_CONFIGS = {
  base: PATH_CONFIG,
  timeLimit: { ...PATH_CONFIG, maxExecutionTime: TIME_LIMIT_MS },
  force: { ...PATH_CONFIG, maxExecutionTime: TIME_LIMIT_MS, earlyStopping: 'force' },
  // Room for the final call after an answer, a correction and a tool step (SPEC H3: the last
  // generation's tools run first), but not after two tool steps.
  generate: {
    ...PATH_CONFIG,
    maxTokens: 140,
    maxExecutionTime: TIME_LIMIT_MS,
    earlyStopping: 'generate',
  },
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
  toolBudget: TOOL_BUDGET,
  forcedBudget: { ...TOOL_BUDGET, earlyStopping: 'force' },
  costBudget: {
    ...TOOL_BUDGET,
    maxTokens: 2_000,
    maxCost: 100,
    prices: { inputPerMillion: 1_000_000, outputPerMillion: 1_000_000 },
    earlyStopping: 'generate',
  },
} as const satisfies Record<string, ChainConfig>;

/** Whether a walk under `config` offers approval events (see PATH_CONFIGS.approval). */
export function walksApprovals(config: ChainConfig): boolean {
  return config.approvalTimeout !== undefined;
}

export type PathConfigName = keyof typeof PATH_CONFIGS;

export function pathInput(config: ChainConfig = PATH_CONFIG): ChainInput {
  return { config, messages: [userMessage('What is the capital of France?')] };
}
