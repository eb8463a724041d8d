// How the viewer turns a machine into the diagrams its page draws, and a reported state into
// the Mermaid node ids it lights up.
import { chainMachine, toolLoopMachine } from 'statecraft/machines';
import { describe, expect, it } from 'vitest';
import { createMachine } from 'xstate';
import { activeNodeIds, diagramsOf, withoutLabels } from '../../src/viewer/machine-diagram.js';
import { resolveMermaid } from '../../src/viewer/page-assets.js';

describe('the diagrams of a machine', () => {
  it('plain: every state, one unlabelled arrow per pair of states, left to right', () => {
    const { plain, labelled } = diagramsOf(chainMachine);
    expect(plain).toMatch(/^stateDiagram-v2\n {2}direction LR\n/);
    for (const state of ['idle', 'thinking', 'doing', 'validating', 'succeeded', 'failed']) {
      expect(plain).toContain(`state "${state}" as s_${state}`);
    }
    // thinking → failed is two transitions (token limit, model error): one arrow here.
    expect(plain.match(/^ {2}s_thinking --> s_failed$/gm)).toHaveLength(1);
    expect(plain).not.toContain(' : ');
    // The labelled one is the CLI's export: both transitions, with their triggers and guards.
    expect(labelled).toContain('s_thinking --> s_failed : callModel.done [isOverTokenLimit]');
    expect(labelled).toContain('s_thinking --> s_failed : callModel.error');
  });

  it('keeps compound states as boxes', () => {
    const { plain } = diagramsOf(toolLoopMachine);
    expect(plain).toContain('state "running" as s_running {');
    expect(plain).toContain('s_running__planning --> s_running__planned');
  });

  it('is made once per machine', () => {
    expect(diagramsOf(chainMachine)).toBe(diagramsOf(chainMachine));
  });

  it('withoutLabels drops state descriptions and arrow labels, nothing else', () => {
    const text = [
      'stateDiagram-v2',
      '  state "a" as s_a',
      '  s_a : always [ready] / note',
      '  [*] --> s_a',
      '  s_a --> s_b : GO [ok] / act',
      '  s_a --> s_b : STOP',
      '  s_b --> [*]',
    ].join('\n');
    expect(withoutLabels(text)).toBe(
      [
        'stateDiagram-v2',
        '  state "a" as s_a',
        '  [*] --> s_a',
        '  s_a --> s_b',
        '  s_b --> [*]',
      ].join('\n'),
    );
  });
});

describe('the node ids of a reported state', () => {
  it('a state name, JSON of a compound value, or the value itself; ancestors first', () => {
    expect(activeNodeIds('thinking')).toEqual(['s_thinking']);
    expect(activeNodeIds('{"running":"planning"}')).toEqual(['s_running', 's_running__planning']);
    expect(activeNodeIds({ running: 'executing' })).toEqual(['s_running', 's_running__executing']);
    expect(activeNodeIds({ a: 'x', b: { c: 'y' } })).toEqual([
      's_a',
      's_a__x',
      's_b',
      's_b__c',
      's_b__c__y',
    ]);
  });

  it('matches the ids of the diagram the page draws', () => {
    const machine = createMachine({
      id: 'review',
      initial: 'needs-review',
      states: { 'needs-review': { on: { OK: 'done' } }, done: { type: 'final' } },
    });
    const [id] = activeNodeIds('needs-review');
    expect(diagramsOf(machine).plain).toContain(`as ${id}\n`);
  });

  it('nothing for what no machine could report', () => {
    expect(activeNodeIds('{not json')).toEqual([]);
    expect(activeNodeIds(42)).toEqual([]);
    expect(activeNodeIds(null)).toEqual([]);
  });
});

describe('Mermaid for the page', () => {
  it('is the installed browser bundle', () => {
    expect(resolveMermaid()).toMatch(/node_modules\/mermaid\/dist\/mermaid\.min\.js$/);
  });

  it('when it is not installed, the error says how to install it', () => {
    const missing = () => {
      throw Object.assign(new Error("Cannot find module 'mermaid'"), { code: 'MODULE_NOT_FOUND' });
    };
    expect(() => resolveMermaid(missing)).toThrow(/run `npm install mermaid`/);
  });
});
