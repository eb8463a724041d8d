import { assertUnreachable } from 'statecraft/testing';
import { describe, expect, it } from 'vitest';
import { type ToolLoopConfig, toolLoopMachine } from '../../machines/tool-loop.js';
import { allTransitionNames, reachabilityViolations, visitedStateNodes } from './graph-kit.js';
import {
  APPROVAL_CONFIG,
  APPROVAL_FAIL_CONFIG,
  approvalSafetyEvents,
  approvalViolations,
  EVENTS,
  eventName,
  executingBoundViolations,
  graphViolations,
  type LoopPath,
  loopGraph,
  PATH_CONFIG,
  pathInput,
  pathName,
  REACHABILITY_CHECKS,
  RECORD,
  RESPONSE,
  type ReplayResult,
  replayPath,
  requiredStateNodes,
  SECOND_RECORD,
  STATE_NODES,
  serializeLoopState,
  simplePaths,
  stateName,
  TIMEOUT_EVENT,
  TOOL_BUDGET_CONFIG,
  type ToolLoopSnapshot,
  toolCallBoundViolations,
} from './tool-loop-graph.js';

// SPEC D2 / D3 for the tool loop: every simple path under small limits, replayed against a
// real actor, and properties proven on the graph. See tool-loop-graph.ts.

const paths = simplePaths();
const finalPaths = paths.filter((path) => path.state.status === 'done');
const graph = loopGraph();

// SPEC H2: the walks that offer approval events (one round, no plan retry: the rounds and
// retries are the walk above's). Under the 'fail' policy only the paths where a deadline
// passes differ from the 'reject' walk's: those are replayed.
const approvalPaths = simplePaths(toolLoopMachine, APPROVAL_CONFIG);
const approvalFailPaths = simplePaths(toolLoopMachine, APPROVAL_FAIL_CONFIG);
const expiringFailPaths = approvalFailPaths.filter((path) =>
  path.steps.some((step) => step.event === EVENTS.approvalTimedOut),
);
const approvalGraph = loopGraph(toolLoopMachine, APPROVAL_CONFIG);
const approvalFailGraph = loopGraph(toolLoopMachine, APPROVAL_FAIL_CONFIG);

// Each path is replayed once; the coverage test reads the transitions the replays took.
const replays = new Map<LoopPath, Promise<ReplayResult>>();
function replayed(path: LoopPath, config: ToolLoopConfig): Promise<ReplayResult> {
  let replay = replays.get(path);
  if (!replay) {
    replay = replayPath(path, toolLoopMachine, config);
    replays.set(path, replay);
  }
  return replay;
}

// Transitions no path under PATH_CONFIG takes, and why. Anything else untaken fails.
const UNTAKEN: Record<string, string> = {
  'nextRound always#0 [hasNoTools] → converging': 'a loop without tools: its own test below',
  'nextRound always#1 [isLoopDisabled] → converging': 'enabled: false: its own test below',
  'converging always#1 → done': 'a loop without a final response: its own test below',
  'planned always#0 [isPlanOnly] → done': 'planOnly(): its own test below',
  'nextRound always#3 [isToolCallBudgetSpent] → converging': 'maxToolCalls: its own test below',
  'planned always#1 [wouldPassToolCallBudget] → converging': 'maxToolCalls: its own test below',
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
        await replayed(path, PATH_CONFIG);
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

    it('still holds with other limits (maxRounds 1 and 3, planRetries 0 and 2, approvals over 2 rounds)', () => {
      for (const change of [
        { maxRounds: 1 },
        { maxRounds: 3 },
        { planRetries: 0 },
        { planRetries: 2 },
        { approvalTimeout: 'reject' as const },
        { approvalTimeout: 'fail' as const },
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
      // awaitingApproval is the approval walks' (below).
      expect([...visitedStateNodes(graph)].sort()).toEqual(requiredStateNodes(PATH_CONFIG).sort());
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

    it('takes every transition the machine defines, but the ones known untaken (with the approval walks)', async () => {
      const taken = new Set<string>();
      const walks = [
        [paths, PATH_CONFIG],
        [approvalPaths, APPROVAL_CONFIG],
        [expiringFailPaths, APPROVAL_FAIL_CONFIG],
      ] as const;
      for (const [walk, config] of walks) {
        for (const path of walk) {
          for (const t of (await replayed(path, config)).transitions) taken.add(t);
        }
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

    describe('maxToolCalls (SPEC H3)', () => {
      const budgetPaths = simplePaths(toolLoopMachine, TOOL_BUDGET_CONFIG);
      const budgetGraph = loopGraph(toolLoopMachine, TOOL_BUDGET_CONFIG);
      const named = (name: string) => {
        const found = budgetPaths.find((p) => pathName(p) === name);
        if (!found) throw new Error(`no path '${name}'`);
        return found;
      };

      it('never executes past it, and keeps every other property', () => {
        expect(toolCallBoundViolations(budgetGraph, TOOL_BUDGET_CONFIG)).toEqual([]);
        expect(graphViolations(toolLoopMachine, TOOL_BUDGET_CONFIG)).toEqual([]);
        expect(budgetPaths.length).toBe(199);
      });

      it('replays every path under it on a real actor, taking both of its transitions', async () => {
        const taken = new Set<string>();
        for (const path of budgetPaths) {
          for (const t of (await replayPath(path, toolLoopMachine, TOOL_BUDGET_CONFIG)).transitions)
            taken.add(t);
        }
        expect(taken).toContain('nextRound always#3 [isToolCallBudgetSpent] → converging');
        expect(taken).toContain('planned always#1 [wouldPassToolCallBudget] → converging');
      });

      it('runs none of a plan that would pass it, and responds with what ran', () => {
        const over = named('planExecute → record → executed → planExecuteTwo → responded ⇒ done')
          .state.output;
        expect(over).toMatchObject({ status: 'done', stopReason: 'max-tool-calls', rounds: 1 });
        expect(over?.toolLogs).toEqual([RECORD]);
        expect(over?.plans.map((p) => p.plan.executionCommands.length)).toEqual([1, 2]);
      });

      it('plans no more once it is spent', () => {
        const spent = named(
          'planExecuteTwo → record → secondRecord → executedTwo → responded ⇒ done',
        ).state.output;
        expect(spent).toMatchObject({ status: 'done', stopReason: 'max-tool-calls', rounds: 1 });
        expect(spent?.toolLogs).toEqual([RECORD, SECOND_RECORD]);
        expect(spent?.plans).toHaveLength(1);
      });
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
  describe('approvals on broken machines', () => {
    it('reports a waiting command outside awaitingApproval when hasNoPendingApprovals always holds', () => {
      const leaves = toolLoopMachine.provide({ guards: { hasNoPendingApprovals: () => true } });
      const properties = new Set(graphViolations(leaves, APPROVAL_CONFIG).map((v) => v.property));
      expect(properties.has('awaiting-held')).toBe(true);
      expect(() => assertUnreachable(leaves, commandWaitsOutsideTheGate, SAFETY_OPTIONS)).toThrow(
        /is reachable in 2 event\(s\)/,
      );
    });

    it('reports a decision forwarded for a call no one asked about when isAwaitingDecision always holds', () => {
      const credulous = toolLoopMachine.provide({ guards: { isAwaitingDecision: () => true } });
      const violations = graphViolations(credulous, APPROVAL_CONFIG);
      expect(
        violations.filter((v) => v.property === 'decision-forwarded-once').length,
      ).toBeGreaterThan(0);
      expect(violations[0]?.detail).toMatch(/call_9|approve/i);
    });

    it("replay fails when a deadline does not fail the run under onApprovalTimeout 'fail'", async () => {
      const lenient = toolLoopMachine.provide({
        guards: { shouldFailOnApprovalTimeout: () => false },
      });
      const path = expiringFailPaths.find(
        (p) => pathName(p) === 'planExecute → approvalRequested → approvalTimedOut ⇒ failed',
      ) as LoopPath;
      expect(path).toBeDefined();
      await replayPath(path, toolLoopMachine, APPROVAL_FAIL_CONFIG);
      await expect(replayPath(path, lenient, APPROVAL_FAIL_CONFIG)).rejects.toThrow(
        /step 3 \(approvalTimedOut\)/,
      );
    });
  });

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

    it('reports executing past maxToolCalls when the budget is ignored (H3)', () => {
      const overspending = toolLoopMachine.provide({
        guards: { isOverToolCallBudget: () => false, isToolCallBudgetSpent: () => false },
      });
      const properties = new Set(
        graphViolations(overspending, TOOL_BUDGET_CONFIG).map((v) => v.property),
      );
      expect(properties).toContain('tool-call-bound');
    });

    it('reports executing never entered when shouldExecute never holds', () => {
      const neverExecutes = toolLoopMachine.provide({ guards: { shouldExecute: () => false } });
      expect(graphViolations(neverExecutes)).toEqual([
        { property: 'state-covered', detail: 'running.executing is never entered' },
      ]);
    });
  });
});

/** A command waits for a decision while the loop is anywhere but awaitingApproval (or failed). */
function commandWaitsOutsideTheGate(snapshot: ToolLoopSnapshot): boolean {
  return (
    snapshot.context.approvals.awaiting.length > 0 &&
    !snapshot.matches({ running: 'awaitingApproval' }) &&
    !snapshot.matches('failed')
  );
}

/**
 * assertUnreachable's walk: the approval walk's events and the hostile ones (the round's end
 * while a command waits, decisions on calls no one asked about); the effects actor answers
 * only through those events, and the loop's timeout is offered as its delay.
 */
const SAFETY_OPTIONS = {
  input: pathInput(APPROVAL_CONFIG),
  events: (snapshot: ToolLoopSnapshot) =>
    approvalSafetyEvents(snapshot).filter((event) => event.type !== TIMEOUT_EVENT) as never,
  actors: { effects: 'never' as const },
  serializeState: serializeLoopState,
};

describe(`tool-loop machine, walking approvals (SPEC H2): ${approvalPaths.length} simple paths, and ${expiringFailPaths.length} where a deadline fails the run`, () => {
  it('has the graph these limits give (update the counts when the machine changes on purpose)', () => {
    expect({
      simplePaths: approvalPaths.length,
      finalPaths: approvalPaths.filter((p) => p.state.status === 'done').length,
      vertices: approvalGraph.vertices.size,
      edges: approvalGraph.edges.length,
      failSimplePaths: approvalFailPaths.length,
      expiringFailPaths: expiringFailPaths.length,
      failVertices: approvalFailGraph.vertices.size,
      failEdges: approvalFailGraph.edges.length,
    }).toEqual({
      simplePaths: 387,
      finalPaths: 291,
      vertices: 181,
      edges: 196,
      failSimplePaths: 288,
      expiringFailPaths: 9,
      failVertices: 141,
      failEdges: 154,
    });
  });

  describe("replay on a real actor ('reject')", () => {
    for (const path of approvalPaths) {
      it(pathName(path), async () => {
        await replayed(path, APPROVAL_CONFIG);
      });
    }
  });

  describe("replay on a real actor ('fail', a deadline passes)", () => {
    for (const path of expiringFailPaths) {
      it(pathName(path), async () => {
        await replayed(path, APPROVAL_FAIL_CONFIG);
      });
    }
  });

  it('enters awaitingApproval, and keeps every other property, under both policies', () => {
    for (const [walk, config] of [
      [approvalGraph, APPROVAL_CONFIG],
      [approvalFailGraph, APPROVAL_FAIL_CONFIG],
    ] as const) {
      expect([...visitedStateNodes(walk)].sort()).toEqual([...STATE_NODES].sort());
      expect(graphViolations(toolLoopMachine, config)).toEqual([]);
    }
  });

  it('a deadline that fails the run leaves nothing waiting, and records its decision', () => {
    const failed = [...approvalFailGraph.vertices.values()].filter(
      (snapshot) =>
        snapshot.status === 'done' &&
        snapshot.context.failure?.message.startsWith('No decision on tool call') === true,
    );
    expect(failed.length).toBeGreaterThan(0);
    for (const snapshot of failed) {
      expect(snapshot.context.approvals.awaiting).toEqual([]);
      expect(snapshot.context.approvals.decided.at(-1)).toMatchObject({ timedOut: true });
    }
  });

  it('never lets a command wait outside awaitingApproval, whatever the host or people send (assertUnreachable)', () => {
    const { explored } = assertUnreachable(
      toolLoopMachine,
      commandWaitsOutsideTheGate,
      SAFETY_OPTIONS,
    );
    // The hostile events lead nowhere the walk does not go.
    expect(explored).toBe(approvalGraph.vertices.size);
    expect(
      assertUnreachable(toolLoopMachine, commandWaitsOutsideTheGate, {
        ...SAFETY_OPTIONS,
        input: pathInput(APPROVAL_FAIL_CONFIG),
      }).explored,
    ).toBeGreaterThan(0);
  });

  it('forwards a decision only for a call that waits for one, once', () => {
    const hostile = loopGraph(toolLoopMachine, APPROVAL_CONFIG, approvalSafetyEvents);
    expect(approvalViolations(hostile)).toEqual([]);
    // The hostile events were offered, and ignored.
    const ignored = hostile.edges.filter(
      (edge) => (edge.event as { callId?: string }).callId === 'call_9',
    );
    expect(ignored.length).toBeGreaterThan(0);
    for (const edge of ignored) expect(edge.to.context.approvals).toBe(edge.from.context.approvals);
    const ended = hostile.edges.filter(
      (edge) =>
        edge.event.type === 'execute.done' && edge.from.matches({ running: 'awaitingApproval' }),
    );
    expect(ended.length).toBeGreaterThan(0);
    for (const edge of ended) expect(edge.transitions).toEqual([]);
  });

  it("a rejected or expired command is a decision the host is told of; under 'fail' a deadline fails the run", () => {
    const end = (walk: LoopPath[], name: string) => {
      const path = walk.find((p) => pathName(p) === name);
      if (!path) throw new Error(`no path ${name}`);
      return path.state;
    };
    const rejected = end(
      approvalPaths,
      'planExecute → approvalRequested → reject → record → executed → responded ⇒ done',
    );
    expect(rejected.context.approvals.decided).toEqual([
      { callId: 'call_1', approved: false, reason: 'not now' },
    ]);
    const expired = end(
      approvalPaths,
      'planExecute → approvalRequested → approvalTimedOut → record → executed → responded ⇒ done',
    );
    expect(expired.context.approvals.decided).toEqual([
      { callId: 'call_1', approved: false, reason: 'no decision in time', timedOut: true },
    ]);
    const failed = end(
      expiringFailPaths,
      'planExecute → approvalRequested → approvalTimedOut ⇒ failed',
    );
    expect(failed.output).toMatchObject({
      status: 'failed',
      failure: {
        code: 'TIMEOUT',
        limit: 1_000,
        message:
          "No decision on tool call call_1 ('lookup') within its approvalTimeoutMs (1000 ms)",
      },
    });
    // Aborted or timed out while a command waits: failed, as while executing.
    const aborted = end(approvalPaths, 'planExecute → approvalRequested → abort ⇒ failed');
    expect(aborted.context.failure?.code).toBe('ABORTED');
    const timedOut = end(approvalPaths, 'planExecute → approvalRequested → timeout ⇒ failed');
    expect(timedOut.context.failure?.code).toBe('TIMEOUT');
  });
});
