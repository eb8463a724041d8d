import { responseToolCalls } from 'statecraft';
import { describe, expect, it } from 'vitest';
import { chainMachine } from '../../machines/chain.js';
import {
  type ChainPath,
  chainGraph,
  chainTransitionNames,
  doingBoundViolations,
  eventName,
  graphViolations,
  PATH_CONFIG,
  pathName,
  REACHABILITY_CHECKS,
  reachabilityViolations,
  replayPath,
  STATE_NODES,
  simplePaths,
  visitedStateNodes,
} from './chain-graph.js';

// SPEC D2 / D3: the chain machine walked path by path with xstate/graph, and properties
// proven on its graph. Traversal applies the effects' answer events to snapshots; replay runs
// a real actor whose `effects` host the test answers step by step. See chain-graph.ts.

const paths = simplePaths();
const finalPaths = paths.filter((path) => path.state.status === 'done');
const graph = chainGraph();

// The transitions no path under PATH_CONFIG takes, and why. Anything else untaken fails.
const UNTAKEN: Record<string, string> = {
  // Only when the run starts over a limit (maxIterations <= 0, or maxTokens <= 0): covered by
  // its own test below.
  'idle always#1 → failed': 'a run that starts over a limit',
  // Only when an answer lands exactly on maxTokens and its tools then run: the path limits'
  // token costs never sum to the budget; test/chain/c03-limits.test.ts covers it.
  'doing executeTools.done#1 → failed': 'a tool step that starts with the budget exactly spent',
};

describe(`chain machine: ${paths.length} simple paths (${finalPaths.length} end in a final state)`, () => {
  it('has the graph these limits give (update the counts when the machine changes on purpose)', () => {
    expect({
      simplePaths: paths.length,
      finalPaths: finalPaths.length,
      vertices: graph.vertices.size,
      edges: graph.edges.length,
    }).toEqual({ simplePaths: 31, finalPaths: 24, vertices: 31, edges: 30 });
    // Every simple path that does not end in a final state is a prefix of one that does.
    const eventsOf = (path: ChainPath) => path.steps.map((step) => eventName(step.event));
    const complete = finalPaths.map(eventsOf);
    for (const path of paths) {
      const events = eventsOf(path);
      expect(
        complete.some((full) => events.every((event, i) => full[i] === event)),
        pathName(path),
      ).toBe(true);
    }
  });

  describe('replay on a real actor', () => {
    for (const path of paths) {
      it(pathName(path), async () => {
        await replayPath(path);
      });
    }
  });

  describe('graph properties (SPEC D3)', () => {
    it('never is in doing, nor enters it, once iterations reach maxIterations', () => {
      expect(doingBoundViolations(graph, PATH_CONFIG)).toEqual([]);
      // The bound is tight: doing is reached, at the last iteration that still allows it.
      const doing = [...graph.vertices.values()].filter((s) => s.matches('doing'));
      expect(doing.map((s) => s.context.iterations)).toEqual([PATH_CONFIG.maxIterations - 1]);
    });

    it('still holds with more room (maxIterations 3 and 4)', () => {
      for (const maxIterations of [3, 4]) {
        const config = { ...PATH_CONFIG, maxIterations };
        expect(graphViolations(chainMachine, config), `maxIterations ${maxIterations}`).toEqual([]);
      }
    });

    for (const check of REACHABILITY_CHECKS) {
      it(`every reachable state can reach the target: ${check.property}`, () => {
        expect(reachabilityViolations(graph, check)).toEqual([]);
      });
    }

    it('reaches both final states, and enters every state node', () => {
      const ends = new Set(finalPaths.map((path) => String(path.state.value)));
      expect([...ends].sort()).toEqual(['failed', 'succeeded']);
      expect([...visitedStateNodes(graph)].sort()).toEqual([...STATE_NODES].sort());
      // Failure codes reached under these limits: all five.
      const codes = new Set(finalPaths.map((path) => path.state.context.failure?.code));
      expect([...codes].sort()).toEqual([
        'ABORTED',
        'CHAIN_ERROR',
        'MODEL_ERROR',
        'PROTOCOL_ERROR',
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
      for (const path of finalPaths) {
        const { context } = path.state;
        // Generation 2 is always made after the iteration warning (threshold -1 of 2).
        expect(notes(path, iterations?.prompt), pathName(path)).toBe(
          context.iterations === 2 ? 1 : 0,
        );
        // The token warning (at 50) is given only when a generation follows one that crossed it.
        expect(notes(path, tokens?.prompt), pathName(path)).toBe(context.warned.tokens ? 1 : 0);
      }
      expect(finalPaths.filter((path) => path.state.context.warned.tokens).length).toBeGreaterThan(
        0,
      );
    });

    it('takes every transition the machine defines, but the ones known untaken', async () => {
      const taken = new Set<string>();
      for (const path of paths) {
        for (const t of (await replayPath(path)).transitions) taken.add(t);
      }
      const untaken = chainTransitionNames().filter((name) => !taken.has(name));
      expect(untaken.sort()).toEqual(Object.keys(UNTAKEN).sort());
    });

    it('fails at once from idle when a run starts over a limit', async () => {
      for (const [config, code] of [
        [{ ...PATH_CONFIG, maxIterations: 0 }, 'PROTOCOL_ERROR'],
        [{ ...PATH_CONFIG, maxTokens: -1 }, 'TOKEN_LIMIT'],
      ] as const) {
        const [path, ...more] = simplePaths(chainMachine, config);
        expect(more).toEqual([]);
        expect(path?.state.value).toBe('failed');
        expect(path?.state.context.failure?.code).toBe(code);
        const { transitions } = await replayPath(path as ChainPath, chainMachine, config);
        expect(transitions.has('idle always#1 → failed')).toBe(true);
      }
    });
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
      const path = finalPaths.find(
        (p) => pathName(p) === 'answer → invalid → toolCall ⇒ failed',
      ) as ChainPath;
      expect(path).toBeDefined();
      await replayPath(path); // the real machine follows it
      await expect(replayPath(path, unbounded)).rejects.toThrow(/step 3 \(toolCall\)/);
    });

    it('reports success unreachable when canSucceed never holds', () => {
      const neverSucceeds = chainMachine.provide({ guards: { canSucceed: () => false } });
      const properties = new Set(graphViolations(neverSucceeds).map((v) => v.property));
      expect([...properties].sort()).toEqual(['state-covered', 'success-reachable-without-abort']);
    });
  });
});
