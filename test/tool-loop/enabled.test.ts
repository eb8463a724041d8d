// SPEC T4's switch (the seed's `tool.loop.enabled`): `enabled: false` turns the loop off. The
// planner is never called and no tool runs, yet the final response is still made, from the
// request alone. The machine decides it with its `isLoopDisabled` guard (issue 14).
import { createToolLoop, type Planner, type Responder } from 'statecraft';
import { ScriptedModel } from 'statecraft/testing';
import { describe, expect, it, vi } from 'vitest';
import { searchTool } from './search-tool.js';

const SEARCH_PLAN = {
  nextAction: 'execute',
  executionCommands: [{ purpose: 'Search x', toolName: 'search', toolKwargs: { q: 'x' } }],
};

describe('enabled: false', () => {
  it('never calls the planner and runs no tool, but still responds', async () => {
    const { tool, execute } = searchTool();
    const planner = vi.fn<Planner>(() => SEARCH_PLAN);
    const respond = vi.fn<Responder>(({ userInput }) => `answered ${userInput} without tools`);
    const loop = createToolLoop({ planner, tools: [tool], respond, enabled: false });

    const result = await loop.invoke('what is x?');

    expect(planner).not.toHaveBeenCalled();
    expect(execute).not.toHaveBeenCalled();
    expect(respond).toHaveBeenCalledTimes(1);
    expect(respond.mock.calls[0]?.[0]).toMatchObject({
      userInput: 'what is x?',
      actionResults: {},
      extraInstruction: undefined,
    });
    expect(result).toMatchObject({
      answer: 'answered what is x? without tools',
      stopReason: 'disabled',
      rounds: 0,
      plans: [],
      toolLogs: [],
    });
  });

  it('answers with the model alone: one response call, no planning call', async () => {
    const { tool } = searchTool();
    const model = new ScriptedModel([{ text: 'Paris.' }]);
    const result = await createToolLoop({ model, tools: [tool], enabled: false }).invoke(
      'Capital of France?',
    );
    expect(result).toMatchObject({ answer: 'Paris.', stopReason: 'disabled' });
    expect(model.requests).toHaveLength(1);
    expect(model.requests[0]?.responseFormat).toBeUndefined();
    model.assertComplete();
  });

  it('planOnly() of a disabled loop is a response plan, without a planner call', async () => {
    const { tool } = searchTool();
    const planner = vi.fn<Planner>(() => SEARCH_PLAN);
    const loop = createToolLoop({ planner, tools: [tool], enabled: false });
    expect(await loop.planOnly('go')).toEqual({ nextAction: 'response', executionCommands: [] });
    expect(planner).not.toHaveBeenCalled();
  });

  it('enabled: true (and the default) plans and executes as usual', async () => {
    const { tool, execute } = searchTool();
    const planner: Planner = (context) =>
      context.roundIndex === 0 ? SEARCH_PLAN : { nextAction: 'response' };
    for (const enabled of [true, undefined]) {
      const result = await createToolLoop({
        planner,
        tools: [tool],
        ...(enabled !== undefined && { enabled }),
      }).invoke('go');
      expect(result).toMatchObject({ stopReason: 'response', rounds: 1 });
    }
    expect(execute).toHaveBeenCalledTimes(2);
  });
});
