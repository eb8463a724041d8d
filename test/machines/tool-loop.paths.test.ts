import { describe, expect, it } from 'vitest';
import { toolLoopMachine } from '../../machines/tool-loop.js';
import { allTransitionNames, reachabilityViolations, visitedStateNodes } from './graph-kit.js';
import {
  EVENTS,
  eventName,
  executingBoundViolations,
  graphViolations,
  type LoopPath,
  loopGraph,
  PATH_CONFIG,
  pathName,
  REACHABILITY_CHECKS,
  RECORD,
  RESPONSE,
  replayPath,
  STATE_NODES,
  simplePaths,
  stateName,
} from './tool-loop-graph.js';

// SPEC D2 / D3 for the tool loop: every simple path under small limits, replayed against a
// real actor, and properties proven on the graph. See tool-loop-graph.ts.

const paths = simplePaths();
const finalPaths = paths.filter((path) => path.state.status === 'done');
const graph = loopGraph();

// Transitions no path under PATH_CONFIG takes, and why. Anything else untaken fails.
const UNTAKEN: Record<string, string> = {
  'nextRound always#0 [hasNoTools] → converging': 'a loop without tools: its own test below',
  'nextRound always#1 [isLoopDisabled] → converging': 'enabled: false: its own test below',
  'converging always#1 → done': 'a loop without a final response: its own test below',
  'planned always#0 [isPlanOnly] → done': 'planOnly(): its own test below',
};

describe(`tool-loop machine: ${paths.length} simple paths (${finalPaths.length} end in a final state)`, () => {
  it('has the graph these limits give (update the counts when the machine changes on purpose)', () => {
    expect({
      simplePaths: paths.length,
      finalPaths: finalPaths.length,
      vertices: graph.vertices.size,
      edges: graph.edges.length,
    }).toEqual({ simplePaths: 149, finalPaths: 115, vertices: 53, edges: 62 });
  });

  describe('replay on a real actor', () => {
    for (const path of paths) {
      it(pathName(path), async () => {
        await replayPath(path);
      });
    }
  });

  describe('graph properties (SPEC D3)', () => {
    it('never is in executing once roundIndex reaches maxRounds, and executes exactly maxRounds rounds at most', () => {
      expect(executingBoundViolations(graph, PATH_CONFIG)).toEqual([]);
      const rounds = finalPaths.map((path) => path.state.context.roundIndex);
      expect(Math.max(...rounds)).toBe(PATH_CONFIG.maxRounds);
      // The paths that stop on the round limit executed exactly maxRounds rounds.
      const atLimit = finalPaths.filter((p) => p.state.context.stopReason === 'max-rounds');
      expect(atLimit.length).toBeGreaterThan(0);
      for (const path of atLimit) {
        expect(path.state.context.roundIndex, pathName(path)).toBe(PATH_CONFIG.maxRounds);
      }
    });

    it('still holds with other limits (maxRounds 1 and 3, planRetries 0 and 2)', () => {
      for (const change of [
        { maxRounds: 1 },
        { maxRounds: 3 },
        { planRetries: 0 },
        { planRetries: 2 },
      ]) {
        const config = { ...PATH_CONFIG, ...change };
        expect(graphViolations(toolLoopMachine, config), JSON.stringify(change)).toEqual([]);
      }
    });

    for (const check of REACHABILITY_CHECKS) {
      it(`every reachable state can reach the target: ${check.property}`, () => {
        expect(reachabilityViolations(graph, check)).toEqual([]);
      });
    }

    it('reaches both final states with every failure code, and enters every state node', () => {
      const ends = new Set(finalPaths.map((path) => stateName(path.state)));
      expect([...ends].sort()).toEqual(['done', 'failed']);
      const codes = new Set(finalPaths.map((path) => path.state.context.failure?.code));
      expect([...codes].sort()).toEqual([
        'ABORTED',
        'CHAIN_ERROR',
        'MODEL_ERROR',
        'PROTOCOL_ERROR',
        'TIMEOUT',
        undefined,
      ]);
      const reasons = new Set(finalPaths.map((path) => path.state.context.stopReason));
      expect([...reasons].sort()).toEqual(['max-rounds', 'no-commands', 'response', undefined]);
      expect([...visitedStateNodes(graph)].sort()).toEqual([...STATE_NODES].sort());
    });

    it('keeps the finished records of a round cut short by the timeout', () => {
      const cut = finalPaths.find(
        (path) => pathName(path) === 'planExecute → record → timeout ⇒ failed',
      ) as LoopPath;
      expect(cut.state.output?.toolLogs).toEqual([RECORD]);
      expect(cut.state.output?.rounds).toBe(0);
    });

    it('retries a malformed plan once per round, telling the planner why', () => {
      const retried = finalPaths.filter((path) =>
        path.steps.some((step) => step.event === EVENTS.planMalformed),
      );
      for (const path of retried) {
        const events = path.steps.map((step) => eventName(step.event));
        // Two malformed plans in a row (one round) fail the run; one is retried.
        const twice = events.some(
          (e, i) => e === 'planMalformed' && events[i + 1] === 'planMalformed',
        );
        expect(path.state.context.failure?.code === 'PROTOCOL_ERROR', pathName(path)).toBe(twice);
      }
    });

    it('takes every transition the machine defines, but the ones known untaken', async () => {
      const taken = new Set<string>();
      for (const path of paths) {
        for (const t of (await replayPath(path)).transitions) taken.add(t);
      }
      const untaken = allTransitionNames(toolLoopMachine).filter((name) => !taken.has(name));
      expect(untaken.sort()).toEqual(Object.keys(UNTAKEN).sort());
    });

    it('without tools, or with maxRounds 0, goes to the response without planning', async () => {
      const cases = [
        [
          { ...PATH_CONFIG, maxRounds: 0 },
          'max-rounds',
          'nextRound always#2 [isOverRoundLimit] → converging',
        ],
        [PATH_CONFIG, 'tools-off', 'nextRound always#0 [hasNoTools] → converging'],
      ] as const;
      for (const [config, reason, transition] of cases) {
        const input = reason === 'tools-off' ? { availableTools: [] } : {};
        const paths = simplePaths(toolLoopMachine, config, input);
        const done = paths.find((p) => pathName(p) === 'responded ⇒ done') as LoopPath;
        expect(done.state.context.stopReason).toBe(reason);
        expect(paths.some((p) => p.steps.some((s) => s.event.type.includes('plan')))).toBe(false);
        const { transitions } = await replayPath(done, toolLoopMachine, config, input);
        expect(transitions.has(transition)).toBe(true);
      }
    });

    it('with enabled: false, never plans nor executes, and still responds', async () => {
      const config = { ...PATH_CONFIG, enabled: false };
      const paths = simplePaths(toolLoopMachine, config);
      expect(paths.some((p) => p.steps.some((s) => s.event.type.includes('plan')))).toBe(false);
      expect(paths.some((p) => p.state.matches({ running: 'planning' }))).toBe(false);
      const done = paths.find((p) => pathName(p) === 'responded ⇒ done') as LoopPath;
      expect(done.state.output).toMatchObject({
        status: 'done',
        stopReason: 'disabled',
        rounds: 0,
        response: RESPONSE,
      });
      const { transitions } = await replayPath(done, toolLoopMachine, config);
      expect(transitions.has('nextRound always#1 [isLoopDisabled] → converging')).toBe(true);
      // Checked after the tools and before the round limit: both reasons are true then, and
      // either way the planner is never called.
      for (const [input, reason] of [
        [{ availableTools: [] }, 'tools-off'],
        [{}, 'disabled'],
      ] as const) {
        const limit = { ...config, maxRounds: 0 };
        const path = simplePaths(toolLoopMachine, limit, input).find(
          (p) => pathName(p) === 'responded ⇒ done',
        );
        expect(path?.state.context.stopReason, JSON.stringify(input)).toBe(reason);
      }
    });

    it('planOnly stops after the first plan, and never executes', async () => {
      const config = { ...PATH_CONFIG, planOnly: true, respond: false };
      const paths = simplePaths(toolLoopMachine, config);
      expect(paths.some((p) => p.state.matches({ running: 'executing' }))).toBe(false);
      const path = paths.find((p) => pathName(p) === 'planExecute ⇒ done') as LoopPath;
      expect(path.state.output).toMatchObject({
        status: 'done',
        stopReason: 'plan-only',
        rounds: 0,
      });
      const { transitions } = await replayPath(path, toolLoopMachine, config);
      expect(transitions.has('planned always#0 [isPlanOnly] → done')).toBe(true);
    });

    it('without a final response, converging ends the loop in done', async () => {
      const config = { ...PATH_CONFIG, respond: false };
      const path = simplePaths(toolLoopMachine, config).find(
        (p) => pathName(p) === 'planResponse ⇒ done',
      ) as LoopPath;
      expect(path.state.output).toMatchObject({ status: 'done', response: undefined });
      const { transitions } = await replayPath(path, toolLoopMachine, config);
      expect(transitions.has('converging always#1 → done')).toBe(true);
    });
  });

  // The checks must be able to fail: the same checks on deliberately broken copies.
  describe('on broken machines the checks fail', () => {
    const unbounded = toolLoopMachine.provide({ guards: { isOverRoundLimit: () => false } });

    it('reports executing past maxRounds when the round limit is ignored', () => {
      const violations = graphViolations(unbounded);
      expect(violations.filter((v) => v.property === 'executing-bound').length).toBeGreaterThan(0);
      expect(violations[0]?.detail).toMatch(/in executing at round 2 of 2/);
    });

    it('replay fails where the broken machine leaves the path', async () => {
      const path = finalPaths.find(
        (p) =>
          pathName(p) ===
          'planExecute → record → executed → planExecute → record → executed → responded ⇒ done',
      ) as LoopPath;
      expect(path).toBeDefined();
      await replayPath(path);
      await expect(replayPath(path, unbounded)).rejects.toThrow(/step 6 \(executed\)/);
    });

    it('reports unbounded plan retries when canRetryPlan ignores planRetries', () => {
      const retrying = toolLoopMachine.provide({
        guards: {
          canRetryPlan: (_, params: { outcome: { raw: unknown } }) =>
            typeof params.outcome.raw !== 'object',
        },
      });
      const properties = new Set(graphViolations(retrying).map((v) => v.property));
      expect(properties.has('plan-retry-bound')).toBe(true);
    });

    it('reports executing never entered when shouldExecute never holds', () => {
      const neverExecutes = toolLoopMachine.provide({ guards: { shouldExecute: () => false } });
      expect(graphViolations(neverExecutes)).toEqual([
        { property: 'state-covered', detail: 'running.executing is never entered' },
      ]);
    });
  });
});
