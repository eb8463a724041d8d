import type { Message } from 'statecraft';
import { BUDGET_STOP_MESSAGE } from 'statecraft/machines';
import { responseToolCalls } from 'statecraft/model';
import { assertUnreachable } from 'statecraft/testing';
import { describe, expect, it } from 'vitest';
import { type ChainConfig, chainMachine } from '../../machines/chain.js';
import { EARLY_STOP_MESSAGE, earlyStopMessage } from '../../machines/early-stopping.js';
import { pendingToolCalls } from '../../src/compile/tool-linkage.js';
import {
  budgetBoundViolations,
  budgetKeptViolations,
  type ChainPath,
  type ChainSnapshot,
  callsWithBudgetSpent,
  chainEvents,
  chainGraph,
  doingBoundViolations,
  EVENTS,
  eventName,
  graphViolations,
  PATH_CONFIG,
  PATH_CONFIGS,
  type PathConfigName,
  pathInput,
  pathName,
  REACHABILITY_CHECKS,
  reachabilityViolations,
  reachOptions,
  STATE_NODES,
  serializeChainState,
  simplePaths,
  stopBoundViolations,
  TIME_LIMIT_EVENT,
  timeLimitViolations,
  toolCallBoundViolations,
  visitedStateNodes,
} from './chain-graph.js';
import { chainTransitionNames, replayPath } from './chain-replay.js';

// SPEC D2 / D3 (and R4): the chain machine walked path by path with xstate/graph, under one
// configuration per option family, and properties proven on its graphs. Traversal applies the
// effects' answer events to snapshots; replay runs a real actor whose `effects` host the test
// answers step by step. See chain-graph.ts and chain-replay.ts.

const walks = Object.entries(PATH_CONFIGS).map(([name, config]) => {
  const paths = simplePaths(chainMachine, config);
  return {
    name: name as PathConfigName,
    config,
    paths,
    finalPaths: paths.filter((path) => path.state.status === 'done'),
    graph: chainGraph(chainMachine, config),
  };
});
const walk = (name: PathConfigName) => walks.find((w) => w.name === name) as (typeof walks)[0];
const base = walk('base');
const allFinalPaths = walks.flatMap((w) => w.finalPaths.map((path) => ({ ...w, path })));
const named = (name: PathConfigName, path: string) => {
  const found = walk(name).finalPaths.find((p) => pathName(p) === path);
  if (!found) throw new Error(`no path '${path}' under ${name}`);
  return found;
};

// The transitions no path under the PATH_CONFIGS takes, and why. Anything else untaken fails.
const UNTAKEN: Record<string, string> = {
  // Only when the run starts over a limit (maxIterations 0, maxExecutionTime 0, or maxTokens
  // <= 0, which the options refuse): covered by their own tests below.
  'idle always#0 [shouldForceStopOutOfTime] → stopping': "maxExecutionTime 0 with 'force'",
  'idle always#1 [hasNoTimeToStart] → failed': 'maxExecutionTime 0',
  'idle always#3 [shouldForceStopAtStart] → stopping': "maxIterations 0 with 'force'",
  'idle always#4 → failed': 'a run that starts over a limit',
};

describe(`chain machine: ${walks.map((w) => `${w.name} ${w.paths.length}`).join(', ')} simple paths`, () => {
  it('has the graphs these limits give (update the counts when the machine changes on purpose)', () => {
    const counts = Object.fromEntries(
      walks.map((w) => [
        w.name,
        [w.paths.length, w.finalPaths.length, w.graph.vertices.size, w.graph.edges.length],
      ]),
    );
    // [simple paths, final paths, vertices, edges]
    expect(counts).toEqual({
      base: [48, 38, 37, 37],
      timeLimit: [58, 48, 45, 45],
      force: [67, 55, 53, 54],
      generate: [330, 265, 249, 292],
      returnDirect: [113, 91, 83, 86],
      exactBudget: [94, 77, 83, 95],
      toolBudget: [45, 36, 44, 44],
      forcedBudget: [67, 53, 65, 66],
      costBudget: [67, 53, 65, 66],
      approval: [229, 177, 186, 198],
      approvalFail: [208, 170, 169, 183],
    });
    // Every simple path that does not end in a final state is a prefix of one that does.
    const eventsOf = (path: ChainPath) => path.steps.map((step) => eventName(step.event));
    for (const { paths, finalPaths } of walks) {
      const complete = finalPaths.map(eventsOf);
      for (const path of paths) {
        const events = eventsOf(path);
        expect(
          complete.some((full) => events.every((event, i) => full[i] === event)),
          pathName(path),
        ).toBe(true);
      }
    }
  });

  for (const { name, config, paths } of walks) {
    describe(`replay on a real actor: ${name}`, () => {
      for (const path of paths) {
        it(pathName(path), async () => {
          await replayPath(path, chainMachine, config);
        });
      }
    });
  }

  describe('graph properties (SPEC D3)', () => {
    it('without earlyStopping, never is in doing, nor enters it, once iterations reach maxIterations', () => {
      for (const { name, config, graph } of walks) {
        expect(doingBoundViolations(graph, config), name).toEqual([]);
        // The bound is tight: doing is reached, at the last iteration that still allows it.
        const doing = [...graph.vertices.values()].filter((s) => s.matches('doing'));
        const { maxIterations, earlyStopping } = config as ChainConfig;
        const at = new Set(doing.map((s) => s.context.iterations));
        expect(at.has(maxIterations - 1), name).toBe(true);
        // With earlyStopping, at the limit too: the last generation's tools run (SPEC H3),
        // unless the budget is spent first (exactBudget).
        expect(at.has(maxIterations), name).toBe(
          earlyStopping !== undefined &&
            maxIterations < Number.POSITIVE_INFINITY &&
            name !== 'exactBudget',
        );
      }
    });

    it('still holds with more room (maxIterations 3 and 4)', () => {
      for (const { name, config } of walks) {
        for (const maxIterations of [3, 4]) {
          expect(
            graphViolations(chainMachine, { ...config, maxIterations }),
            `${name}, maxIterations ${maxIterations}`,
          ).toEqual([]);
        }
      }
      // Twenty-two graphs of a few hundred vertices: seconds alone, more on a busy machine.
    }, 60_000);

    for (const check of REACHABILITY_CHECKS) {
      it(`every reachable state can reach the target: ${check.property}`, () => {
        for (const { name, graph } of walks) {
          expect(reachabilityViolations(graph, check), name).toEqual([]);
        }
      });
    }

    it('reaches both final states, and enters every state node', () => {
      for (const { name, finalPaths } of walks) {
        const ends = new Set(finalPaths.map((path) => String(path.state.value)));
        expect([...ends].sort(), name).toEqual(['failed', 'succeeded']);
      }
      const visited = new Set(walks.flatMap((w) => [...visitedStateNodes(w.graph)]));
      expect([...visited].sort()).toEqual([...STATE_NODES].sort());
      expect(visitedStateNodes(base.graph).has('stopping')).toBe(true);
      // Failure codes reached under these limits: all eight.
      const codes = new Set(allFinalPaths.map(({ path }) => path.state.context.failure?.code));
      expect([...codes].sort()).toEqual([
        'ABORTED',
        'CHAIN_ERROR',
        'CONFIG_ERROR',
        'COST_LIMIT',
        'MODEL_ERROR',
        'PROTOCOL_ERROR',
        'TIMEOUT',
        'TOKEN_LIMIT',
        undefined,
      ]);
    });

    it('gives each warning once, before the generation that crosses its point', () => {
      const { iterations, tokens } = PATH_CONFIG.warnings;
      const notes = (path: ChainPath, prompt: string | undefined) =>
        (path.state.output?.mutationLog ?? [])
          .flat()
          .filter((m) => m.type === 'systemNote' && m.content === prompt).length;
      for (const path of base.finalPaths) {
        const { context } = path.state;
        // Generation 2 is always made after the iteration warning (threshold -1 of 2).
        expect(notes(path, iterations?.prompt), pathName(path)).toBe(
          context.iterations === 2 ? 1 : 0,
        );
        // The token warning (at 50) is given only when a generation follows one that crossed it.
        expect(notes(path, tokens?.prompt), pathName(path)).toBe(context.warned.tokens ? 1 : 0);
      }
      expect(
        base.finalPaths.filter((path) => path.state.context.warned.tokens).length,
      ).toBeGreaterThan(0);
    });

    it('takes every transition the machine defines, but the ones known untaken', async () => {
      const taken = new Set<string>();
      for (const { config, paths } of walks) {
        for (const path of paths) {
          for (const t of (await replayPath(path, chainMachine, config)).transitions) taken.add(t);
        }
      }
      const untaken = chainTransitionNames().filter((name) => !taken.has(name));
      expect(untaken.sort()).toEqual(Object.keys(UNTAKEN).sort());
      // Every path replayed again: over a thousand real actors, on a busy machine.
    }, 60_000);

    it('fails at once from idle when a run starts over a limit', async () => {
      for (const [config, code] of [
        [{ ...PATH_CONFIG, maxIterations: 0 }, 'PROTOCOL_ERROR'],
        [{ ...PATH_CONFIG, maxIterations: 0, earlyStopping: 'generate' }, 'PROTOCOL_ERROR'],
        [{ ...PATH_CONFIG, maxTokens: -1 }, 'TOKEN_LIMIT'],
      ] as const) {
        const [path, ...more] = simplePaths(chainMachine, config);
        expect(more).toEqual([]);
        expect(path?.state.value).toBe('failed');
        expect(path?.state.context.failure?.code).toBe(code);
        const { transitions } = await replayPath(path as ChainPath, chainMachine, config);
        expect(transitions.has('idle always#4 → failed')).toBe(true);
      }
    });

    it("answers maxIterations 0 with 'force' from idle, making no model call (SPEC H3)", async () => {
      const config = { ...PATH_CONFIG, maxIterations: 0, earlyStopping: 'force' } as const;
      const [path, ...more] = simplePaths(chainMachine, config);
      expect(more).toEqual([]);
      expect(path?.state.output).toMatchObject({
        status: 'succeeded',
        text: EARLY_STOP_MESSAGE,
        iterations: 0,
        stopped: { reason: 'maxIterations', method: 'force' },
      });
      const { transitions } = await replayPath(path as ChainPath, chainMachine, config);
      expect(transitions.has('idle always#3 [shouldForceStopAtStart] → stopping')).toBe(true);
    });

    it('stops from idle when maxExecutionTime is 0, making no model call, whatever earlyStopping', async () => {
      for (const earlyStopping of [undefined, 'generate'] as const) {
        const config = {
          ...PATH_CONFIG,
          maxExecutionTime: 0,
          ...(earlyStopping && { earlyStopping }),
        };
        const [path, ...more] = simplePaths(chainMachine, config);
        expect(more).toEqual([]);
        expect(path?.state.value).toBe('failed');
        expect(path?.state.context.iterations).toBe(0);
        expect(path?.state.context.failure).toMatchObject({ code: 'TIMEOUT', limit: 0 });
        const { transitions } = await replayPath(path as ChainPath, chainMachine, config);
        expect(transitions.has('idle always#1 [hasNoTimeToStart] → failed')).toBe(true);
      }
      const forced = { ...PATH_CONFIG, maxExecutionTime: 0, earlyStopping: 'force' } as const;
      const [path, ...more] = simplePaths(chainMachine, forced);
      expect(more).toEqual([]);
      expect(path?.state.output).toMatchObject({
        status: 'succeeded',
        text: earlyStopMessage('maxExecutionTime'),
        iterations: 0,
        stopped: { reason: 'maxExecutionTime', method: 'force' },
      });
      const { transitions } = await replayPath(path as ChainPath, chainMachine, forced);
      expect(transitions.has('idle always#0 [shouldForceStopOutOfTime] → stopping')).toBe(true);
    });
  });

  describe('SPEC R4 on the graph', () => {
    it('stops a run once: nothing thinks or runs tools after stopping, nor stops twice', () => {
      for (const { name, graph } of walks) expect(stopBoundViolations(graph), name).toEqual([]);
    });

    it('bounds the run by maxExecutionTime until a limit stops it, but not its final call', () => {
      for (const { name, graph } of walks) expect(timeLimitViolations(graph), name).toEqual([]);
      // The timer is offered in concluding, and changes nothing there.
      const { graph } = walk('generate');
      const inConcluding = graph.edges.filter(
        (edge) => edge.event.type === TIME_LIMIT_EVENT && edge.from.matches('concluding'),
      );
      expect(inConcluding.length).toBeGreaterThan(0);
    });

    it('fails with TIMEOUT in thinking, doing or validating without earlyStopping', () => {
      for (const path of [
        'timeLimit ⇒ failed',
        'toolCall → timeLimit ⇒ failed',
        'answer → timeLimit ⇒ failed',
      ]) {
        expect(named('timeLimit', path).state.output, path).toMatchObject({
          status: 'failed',
          failure: { code: 'TIMEOUT', limit: 60_000 },
        });
      }
      // Cut short in doing, the generation is still a step: the steps' usage is the run's.
      const cut = named('timeLimit', 'toolCall → timeLimit ⇒ failed').state.output;
      expect(cut?.steps.map((s) => s.iteration)).toEqual([1]);
    });

    it("'force' ends every limit in succeeded, with the stop message", () => {
      const forced = walk('force').finalPaths.filter((p) => p.state.context.limitReached);
      expect(new Set(forced.map((p) => p.state.context.limitReached))).toEqual(
        new Set(['maxIterations', 'maxExecutionTime']),
      );
      for (const path of forced) {
        expect(path.state.output, pathName(path)).toMatchObject({
          status: 'succeeded',
          result: EARLY_STOP_MESSAGE,
          text: EARLY_STOP_MESSAGE,
          stopped: { reason: path.state.context.limitReached, method: 'force' },
        });
      }
      // The last generation's calls ran before the stop (SPEC H3): the transcript ends with
      // their results.
      const output = named('force', 'answer → invalid → toolCall → toolsDone ⇒ succeeded').state
        .output;
      expect(output?.transcript.toArray().at(-2)).toMatchObject({ role: 'tool', success: true });
      // A call the time limit cut off is answered in the transcript as not run.
      const cut = named('force', 'toolCall → timeLimit ⇒ succeeded').state.output;
      expect(cut?.transcript.toArray().at(-1)).toMatchObject({ role: 'tool', success: false });
    });

    it("'generate' concludes with one call after either limit, and fails a bad final answer", () => {
      const { finalPaths } = walk('generate');
      const concluded = finalPaths.filter(
        (p) => p.state.output?.status === 'succeeded' && p.state.context.limitReached,
      );
      expect(new Set(concluded.map((p) => p.state.context.limitReached))).toEqual(
        new Set(['maxIterations', 'maxExecutionTime']),
      );
      for (const path of concluded) {
        expect(path.state.output, pathName(path)).toMatchObject({
          stopped: { method: 'generate' },
        });
      }
      expect(
        named('generate', 'answer → invalid → toolCall → toolsDone → answer → invalid ⇒ failed')
          .state.context.failure,
      ).toMatchObject({
        code: 'PROTOCOL_ERROR',
      });
      expect(
        named('generate', 'timeLimit → callsOnly ⇒ failed').state.context.failure?.message,
      ).toMatch(/has no text/);
      // Text with calls answers: the calls, which could not run, are dropped.
      const dropped = named('generate', 'timeLimit → toolCall → valid ⇒ succeeded').state.output;
      expect(dropped?.transcript.toArray().at(-1)).toMatchObject({
        role: 'assistant',
        toolCalls: [],
      });
    });

    it('answers every call in the transcript once the final call of generate has answered', () => {
      // However the final call ends (an answer, calls only, over the budget), the calls it made
      // are dropped and the last step's are closed: no call is left waiting in the transcript.
      const concluded = walks.flatMap(({ name, finalPaths }) =>
        finalPaths
          .filter((path) => path.steps.some((step) => step.state.matches('concluding')))
          .map((path) => ({ name, path, title: `${name}: ${pathName(path)}` })),
      );
      // Among them the two endings that once kept the final call's calls: no text, over budget.
      expect(concluded.map((c) => c.title)).toEqual(
        expect.arrayContaining([
          'generate: timeLimit → callsOnly ⇒ failed',
          'generate: toolCall → timeLimit → hugeCalls ⇒ failed',
        ]),
      );
      for (const { path, title } of concluded) {
        const transcript = path.state.output?.transcript;
        expect(transcript && pendingToolCalls(transcript).calls, title).toEqual([]);
      }
    });

    it('fails with the limit that fired, and says when the budget kept generate from concluding', () => {
      // The time limit fires with the budget spent exactly: TIMEOUT, not TOKEN_LIMIT.
      const noFinalCall = /'generate' made no final call: all 61 tokens of maxTokens were spent/;
      for (const path of [
        'toolCall → timeLimit ⇒ failed',
        'twoCalls → timeLimit ⇒ failed',
        'toolCall → toolsDone → timeLimit ⇒ failed',
      ]) {
        const { output } = named('exactBudget', path).state;
        expect(output, path).toMatchObject({
          status: 'failed',
          failure: { code: 'TIMEOUT', limit: 60_000, message: expect.stringMatching(noFinalCall) },
        });
      }
      // Without earlyStopping the same time limit says nothing about generating.
      expect(named('timeLimit', 'toolCall → timeLimit ⇒ failed').state.context.failure).toEqual({
        code: 'TIMEOUT',
        message: 'Reached maxExecutionTime (60000 ms) without a final answer',
        limit: 60_000,
      });
      // A budget spent exactly with no limit reached is the token limit: after tools, or
      // after a correction when no generation can follow.
      for (const path of [
        'toolCall → toolsFailed ⇒ failed',
        'twoCalls → toolsDone ⇒ failed',
        'toolCall → toolsDone → invalid ⇒ failed',
      ]) {
        expect(named('exactBudget', path).state.output, path).toMatchObject({
          status: 'failed',
          failure: { code: 'TOKEN_LIMIT', limit: 61 },
        });
      }
      // And a direct return needs no further call: it succeeds on the exact budget.
      expect(
        named('exactBudget', 'toolCall → toolsDone → valid ⇒ succeeded').state.output,
      ).toMatchObject({ status: 'succeeded', text: 'Paris' });
    });

    it('says nothing of generate when a run without earlyStopping times out on an exact budget', () => {
      // Not one of PATH_CONFIGS (it adds no state): exactBudget without earlyStopping.
      const { earlyStopping: _, ...config } = PATH_CONFIGS.exactBudget;
      const path = simplePaths(chainMachine, config).find(
        (p) => pathName(p) === 'toolCall → timeLimit ⇒ failed',
      );
      expect(path?.state.context.failure).toEqual({
        code: 'TIMEOUT',
        message: 'Reached maxExecutionTime (60000 ms) without a final answer',
        limit: 60_000,
      });
    });

    it('returns one successful returnDirect call directly, and nothing else', () => {
      const direct = named('returnDirect', 'toolCall → toolsDone → valid ⇒ succeeded').state.output;
      expect(direct).toMatchObject({ status: 'succeeded', text: 'Paris', iterations: 1 });
      expect(direct?.intermediateSteps).toHaveLength(1);
      for (const path of [
        'twoCalls → toolsDone → answer → valid ⇒ succeeded',
        'toolCall → toolsFailed → answer → valid ⇒ succeeded',
      ]) {
        expect(named('returnDirect', path).state.output?.iterations, path).toBe(2);
      }
    });
  });

  describe('SPEC Q8 on the graph: a step cut short keeps the calls that finished', () => {
    const isResult = (event: { type: string }) => event.type === 'executeTools.result';
    const finishedIn = (path: ChainPath) =>
      path.steps.filter((step) => isResult(step.event)).length;
    const keeps = (message: Message) =>
      message.role === 'tool' && message.success && message.output === 'Paris';

    it('every result that reached the machine is in the transcript and intermediateSteps, however the run ends', () => {
      let checked = 0;
      for (const { name, path } of allFinalPaths) {
        const finished = finishedIn(path);
        if (finished === 0) continue;
        checked++;
        const output = path.state.output;
        const title = `${name}: ${pathName(path)}`;
        // At least as many as came: a step that ended normally answers call_1 with it too.
        const kept = output?.intermediateSteps.filter((s) => s.observation.output === 'Paris');
        expect(kept?.length, title).toBeGreaterThanOrEqual(finished);
        const answers = output?.transcript.toArray().filter(keeps);
        expect(answers?.length, title).toBeGreaterThanOrEqual(finished);
      }
      expect(checked).toBeGreaterThan(100);
    });

    it('answers as not run only the calls that did not finish', () => {
      // Cut short by the time limit, an abort, the host breaking, with or without earlyStopping.
      for (const [name, path, status] of [
        ['timeLimit', 'toolCall → toolResult → timeLimit ⇒ failed', 'failed'],
        ['base', 'toolCall → toolResult → abort ⇒ failed', 'failed'],
        ['base', 'toolCall → toolResult → toolsError ⇒ failed', 'failed'],
        ['force', 'toolCall → toolResult → timeLimit ⇒ succeeded', 'succeeded'],
      ] as const) {
        const output = named(name, path).state.output;
        expect(output?.status, path).toBe(status);
        expect(output?.transcript.toArray().at(-1), path).toMatchObject({
          role: 'tool',
          toolCallId: 'call_1',
          success: true,
          output: 'Paris',
        });
        expect(output?.steps.at(-1)?.toolResults, path).toEqual([
          { toolCallId: 'call_1', name: 'lookup', output: 'Paris', success: true },
        ]);
      }
      // With two calls, the one that did not finish is answered as not run, after the other.
      const twoCalls = named('returnDirect', 'twoCalls → toolResult → abort ⇒ failed').state.output;
      expect(twoCalls?.transcript.toArray().slice(-2)).toMatchObject([
        { role: 'tool', toolCallId: 'call_1', success: true, output: 'Paris' },
        {
          role: 'tool',
          toolCallId: 'call_2',
          success: false,
          error: expect.stringMatching(/not run/),
        },
      ]);
      expect(twoCalls?.intermediateSteps.map((s) => s.action.id)).toEqual(['call_1']);
    });

    it('a call approved while another waits keeps its result when the run is aborted', () => {
      const path = walk('approval').finalPaths.find(
        (p) =>
          pathName(p) ===
          'toolCall → approvalRequested → secondApprovalRequested → approve → toolResult → abort ⇒ failed',
      );
      expect(path?.state.output?.intermediateSteps.map((s) => s.observation.output)).toEqual([
        'Paris',
      ]);
    });
  });

  describe('SPEC H3 on the graph', () => {
    it('makes no model call its budgets cannot pay for, by the estimate made before it', () => {
      for (const { name, graph } of walks) expect(budgetBoundViolations(graph), name).toEqual([]);
      // Not vacuous: budgets stop runs before a call, by tokens and by cost.
      const stops = new Set(
        allFinalPaths.flatMap(({ path }) => path.steps.map((s) => s.state.context.limitReached)),
      );
      expect(stops).toEqual(
        new Set([
          undefined,
          'maxIterations',
          'maxExecutionTime',
          'maxTokens',
          'maxCost',
          'maxToolCalls',
        ]),
      );
    });

    it('no model call is made once a budget is spent (assertUnreachable)', () => {
      for (const { name, config } of walks) {
        expect(
          () => assertUnreachable(chainMachine, callsWithBudgetSpent, reachOptions(config)),
          name,
        ).not.toThrow();
      }
    });

    it('never succeeds over a budget', () => {
      for (const { name, graph } of walks) expect(budgetKeptViolations(graph), name).toEqual([]);
    });

    it('runs no tools past maxToolCalls, and answers an over-budget request without them', () => {
      for (const { name, graph } of walks) expect(toolCallBoundViolations(graph), name).toEqual([]);
      const output = named('toolBudget', 'cheapCalls → answer → valid ⇒ succeeded').state.output;
      expect(output).toMatchObject({
        status: 'succeeded',
        text: 'Paris.',
        stopped: { reason: 'maxToolCalls', method: 'generate' },
      });
      // The message that asked is not in the transcript; no call is left open.
      const transcript = output?.transcript;
      expect(transcript?.toArray().map((m) => m.role)).toEqual([
        'system',
        'user',
        'system',
        'assistant',
      ]);
      expect(transcript && pendingToolCalls(transcript).calls).toEqual([]);
      expect(output?.steps.map((s) => s.overBudget)).toEqual([true, undefined]);
    });

    it('fails a call expected to cross a budget, or stops early with its message', () => {
      expect(
        named('toolBudget', 'toolCall → toolsDone ⇒ failed').state.context.failure,
      ).toMatchObject({ code: 'TOKEN_LIMIT', limit: 120, estimate: expect.any(Number) });
      expect(
        named('costBudget', 'toolCall → toolsDone ⇒ failed').state.context.failure,
      ).toMatchObject({ code: 'COST_LIMIT', limit: 100, estimate: expect.any(Number) });
      expect(named('forcedBudget', 'toolCall → toolsDone ⇒ succeeded').state.output).toMatchObject({
        text: BUDGET_STOP_MESSAGE,
        stopped: { reason: 'maxTokens', method: 'force' },
      });
      // The final call of maxToolCalls, too, is made only if it fits.
      expect(
        named('costBudget', 'answer → invalid → cheapCalls ⇒ failed').state.context.failure
          ?.message,
      ).toMatch(
        /^maxToolCalls \(1\) was reached, and the final call without tools would exceed maxCost/,
      );
    });

    it("runs the last generation's tools at maxIterations with earlyStopping, so 'generate' reads them", () => {
      const path = named(
        'generate',
        'answer → invalid → toolCall → toolsDone → answer → valid ⇒ succeeded',
      );
      const messages = path.state.output?.transcript.toArray() ?? [];
      expect(messages.at(-2)).toMatchObject({
        role: 'system',
        content: expect.stringMatching(/cannot call tools/),
      });
      expect(messages.filter((m) => m.role === 'tool')).toMatchObject([
        { success: true, output: 'Paris' },
      ]);
    });
  });

  it('keeps its context at 19 keys at most, where XState copies it at full speed', () => {
    // See ChainContext: with 20 keys each assign makes a dictionary-mode copy, ~10× slower.
    // Every config: an option's states (stopping, concluding) may assign keys the base never does.
    for (const { name, graph } of walks) {
      for (const snapshot of graph.vertices.values()) {
        const keys = Object.keys(snapshot.context);
        expect(keys.length, `${name}: ${keys.join(', ')}`).toBeLessThanOrEqual(19);
      }
    }
  });

  // The checks must be able to fail: the same checks on deliberately broken copies.
  describe('on broken machines the checks fail', () => {
    // canDo without the iteration limit: tools run after the last allowed generation.
    const unbounded = chainMachine.provide({
      guards: {
        canDo: ({ event }) =>
          event.type === 'callModel.done' && responseToolCalls(event.output).length > 0,
      },
    });

    it('reports doing past maxIterations when canDo ignores the limit', () => {
      const violations = graphViolations(unbounded);
      expect(violations.filter((v) => v.property === 'doing-bound').length).toBeGreaterThan(0);
      expect(violations[0]?.detail).toMatch(/doing at 2 of 2 iterations/);
    });

    it('replay fails where the broken machine leaves the path', async () => {
      const path = named('base', 'answer → invalid → toolCall ⇒ failed');
      await replayPath(path); // the real machine follows it
      await expect(replayPath(path, unbounded)).rejects.toThrow(/step 3 \(toolCall\)/);
    });

    it('reports success unreachable when canSucceed never holds', () => {
      const neverSucceeds = chainMachine.provide({ guards: { canSucceed: () => false } });
      const properties = new Set(graphViolations(neverSucceeds).map((v) => v.property));
      expect([...properties].sort()).toEqual(['state-covered', 'success-reachable-without-abort']);
    });

    it('reports the final call bounded when the time limit ignores that the run stopped', () => {
      const always = chainMachine.provide({
        guards: {
          hasExecutionTimeLimit: ({ context }) => context.config.maxExecutionTime !== undefined,
        },
      });
      const properties = new Set(
        graphViolations(always, PATH_CONFIGS.generate).map((v) => v.property),
      );
      // It concludes again and again: the traversal stops it, so reachability fails too.
      expect(properties).toContain('stop-bound');
      expect(properties).toContain('time-limit');
    });

    it('reports a second stop when the final answer may be corrected', () => {
      const corrected = chainMachine.provide({ guards: { isFinalAnswer: () => false } });
      const config = { ...PATH_CONFIGS.generate, maxIterations: 3 };
      const properties = new Set(graphViolations(corrected, config).map((v) => v.property));
      expect([...properties]).toContain('stop-bound');
    });

    it('reports a call its budget cannot pay for when nothing checks before the call (H3)', () => {
      const unchecked = chainMachine.provide({ guards: { isNextCallOverBudget: () => false } });
      const properties = new Set(
        graphViolations(unchecked, PATH_CONFIGS.toolBudget).map((v) => v.property),
      );
      expect(properties).toContain('budget-bound');
    });

    it("reports 'generate' concluding over budget when its final call is not checked (H3)", () => {
      const unchecked = chainMachine.provide({
        guards: {
          shouldGenerateFinalAnswer: ({ context }) =>
            context.config.earlyStopping === 'generate' || context.limitReached === 'maxToolCalls',
        },
      });
      for (const config of [PATH_CONFIGS.generate, PATH_CONFIGS.costBudget]) {
        const properties = new Set(graphViolations(unchecked, config).map((v) => v.property));
        expect(properties).toContain('budget-bound');
      }
    });

    it('reports tools past maxToolCalls when the budget is ignored (H3)', () => {
      const unbounded = chainMachine.provide({ guards: { isOverToolCallBudget: () => false } });
      const violations = graphViolations(unbounded, PATH_CONFIGS.toolBudget);
      expect(violations.filter((v) => v.property === 'tool-call-bound').length).toBeGreaterThan(0);
    });

    it('reports a success over maxCost when a call that crossed it is not failed (H3)', () => {
      const unpriced = chainMachine.provide({ guards: { isOverCostLimit: () => false } });
      const properties = new Set(
        graphViolations(unpriced, PATH_CONFIGS.costBudget).map((v) => v.property),
      );
      expect(properties).toContain('budget-kept');
    });

    it("replay fails when earlyStopping does not run the last generation's tools (H3)", async () => {
      const old = chainMachine.provide({ guards: { hasEarlyStopping: () => false } });
      const path = named('force', 'answer → invalid → toolCall → toolsDone ⇒ succeeded');
      await replayPath(path, chainMachine, PATH_CONFIGS.force);
      await expect(replayPath(path, old, PATH_CONFIGS.force)).rejects.toThrow(
        /step 3 \(toolCall\)/,
      );
    });

    it("reports no stop message for maxIterations 0 with 'force' when idle does not stop (H3)", () => {
      const config = { ...PATH_CONFIG, maxIterations: 0, earlyStopping: 'force' } as const;
      const failing = chainMachine.provide({ guards: { shouldForceStopAtStart: () => false } });
      expect(simplePaths(chainMachine, config)[0]?.state.value).toBe('succeeded');
      expect(simplePaths(failing, config)[0]?.state.value).toBe('failed');
    });

    it('thinks when maxExecutionTime is 0 if idle does not check the time first', () => {
      const config = { ...PATH_CONFIG, maxExecutionTime: 0 };
      const late = chainMachine.provide({ guards: { hasNoTimeToStart: () => false } });
      expect(simplePaths(chainMachine, config)).toHaveLength(1);
      expect(simplePaths(late, config).some((p) => p.state.matches('thinking'))).toBe(true);
    });

    it('replay fails when a two-call step returns directly', async () => {
      const eager = chainMachine.provide({
        guards: { isDirectReturn: ({ context }) => context.toolCalls.length > 0 },
      });
      const path = named('returnDirect', 'twoCalls → toolsDone → answer → valid ⇒ succeeded');
      await replayPath(path, chainMachine, PATH_CONFIGS.returnDirect);
      await expect(replayPath(path, eager, PATH_CONFIGS.returnDirect)).rejects.toThrow(
        /step 2 \(toolsDone\)/,
      );
    });
  });

  // SPEC H2 on the graph: no tool that needs approval runs before a decision. The host runs a
  // waiting call only once the machine forwards a decision; here the machine shows it never
  // moves on from a step while one of its calls still waits, whatever answer a (broken) host
  // sends meanwhile: that snapshot is unreachable.
  describe('approvals (SPEC H2)', () => {
    const waitingButMovedOn = (snapshot: ChainSnapshot) =>
      snapshot.status === 'active' &&
      snapshot.context.approvals.awaiting.length > 0 &&
      !snapshot.matches('awaitingApproval');
    const eagerHost = (snapshot: ChainSnapshot) => [
      ...chainEvents(snapshot),
      ...(snapshot.matches('awaitingApproval') ? [EVENTS.toolsDone] : []),
    ];
    const reach = (config: (typeof PATH_CONFIGS)['approval' | 'approvalFail']) => ({
      input: pathInput(config),
      events: eagerHost as never,
      actors: { effects: 'never' as const },
      serializeState: serializeChainState,
    });

    it('never leaves a step while one of its calls waits for a decision', () => {
      for (const config of [PATH_CONFIGS.approval, PATH_CONFIGS.approvalFail]) {
        const { explored } = assertUnreachable(chainMachine, waitingButMovedOn, reach(config));
        expect(explored).toBeGreaterThan(100);
      }
    });

    it('finds the witness when a step may end with a call still waiting', () => {
      const careless = chainMachine.provide({ guards: { hasNoPendingApprovals: () => true } });
      expect(() =>
        assertUnreachable(careless, waitingButMovedOn, reach(PATH_CONFIGS.approval)),
      ).toThrow(/is reachable in 2 event\(s\)/);
    });
  });
});
