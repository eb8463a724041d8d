// SPEC T4 through a run: the fallbacks of plan normalization decide what executes and what
// each record says. The rules themselves are tabled in normalize-plan.test.ts; this file shows
// a loop acting on them (issue 14).
import { createToolLoop, type Planner } from 'statecraft';
import { describe, expect, it } from 'vitest';
import { searchTool } from './search-tool.js';

/** Answers `first` in round 0, then responds. */
function oneRound(first: unknown): Planner {
  return (context) => (context.roundIndex === 0 ? first : { nextAction: 'response' });
}

describe('plan normalization in a run (T4)', () => {
  it('runs the single toolCommand when the list beside it yields no valid command', async () => {
    const { tool, execute } = searchTool();
    const planner = oneRound({
      nextAction: 'execute',
      executionCommands: [{ purpose: 'nameless', toolName: '' }],
      toolCommand: { purpose: 'Search x', toolName: 'search', toolKwargs: { q: 'x' } },
    });
    const result = await createToolLoop({ planner, tools: [tool] }).invoke('go');
    expect(execute).toHaveBeenCalledTimes(1);
    expect(result.rounds).toBe(1);
    expect(result.toolLogs.map((r) => r.kwargs)).toEqual([{ q: 'x' }]);
  });

  it("gives every command without a todo the decision's todoSuggestion, else its next", async () => {
    const { tool } = searchTool();
    const command = (q: string, fields: object = {}) => ({
      purpose: `Search ${q}`,
      toolName: 'search',
      toolKwargs: { q },
      ...fields,
    });
    const planner = oneRound({
      nextAction: 'execute',
      todo_suggestion: 'compare the results',
      executionCommands: [
        command('a'),
        command('b', { todoSuggestion: '  ', next: 'quote b' }),
        command('c', { todoSuggestion: 'read c' }),
      ],
    });
    const result = await createToolLoop({ planner, tools: [tool] }).invoke('go');
    expect(result.toolLogs.map(({ todoSuggestion, next }) => ({ todoSuggestion, next }))).toEqual([
      { todoSuggestion: 'compare the results', next: 'compare the results' },
      { todoSuggestion: 'quote b', next: 'quote b' },
      { todoSuggestion: 'read c', next: 'read c' },
    ]);

    const byNext = oneRound({
      nextAction: 'execute',
      next: 'answer',
      toolCommands: [command('d')],
    });
    const second = await createToolLoop({ planner: byNext, tools: [tool] }).invoke('go');
    expect(second.toolLogs[0]?.todoSuggestion).toBe('answer');
  });
});
