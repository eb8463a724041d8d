// SPEC D1, the proof that toMermaid's text is Mermaid: the real `mermaid` package parses and
// renders every fixture machine in headless Chromium, and the SVG holds one node per simple
// state, one box per compound or parallel state, one arrow per transition target, and every
// label as the machine names it (escaped text comes back as it was written).

import type { Browser, Page } from 'playwright-core';
import { stateIdOf, toMermaid } from 'statecraft/viz';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AnyStateMachine, AnyStateNode, AnyTransitionDefinition } from 'xstate';
import { transitionLabel } from '../../src/viz/labels.js';
import { launchChromium } from '../support/chromium.js';
import { machines, nodesOf } from './fixtures.js';

const MERMAID = new URL('../../node_modules/mermaid/dist/mermaid.min.js', import.meta.url);

// Passed as source text: functions compiled by the test runner may reference its helpers,
// which do not exist in the page.
const RENDER = `async ([id, text]) => {
  const mermaid = globalThis.mermaid;
  await mermaid.parse(text);
  const { svg } = await mermaid.render(id, text);
  const host = document.createElement('div');
  host.innerHTML = svg;
  document.body.append(host);
  const all = (selector) => [...host.querySelectorAll(selector)];
  const result = {
    svg: host.querySelector('svg') !== null,
    nodes: all('g.node').map((g) => ({ id: g.id, text: g.textContent })),
    clusters: all('g.statediagram-cluster[data-id]').map((g) => g.getAttribute('data-id')),
    edgeLabels: all('g.edgeLabel').map((g) => g.textContent).filter((t) => t !== ''),
    arrows: all('path.transition').length,
    regions: all('g.statediagram-cluster-alt').length,
  };
  host.remove();
  return result;
}`;

interface Rendered {
  readonly svg: boolean;
  readonly nodes: readonly { readonly id: string; readonly text: string }[];
  readonly clusters: readonly string[];
  readonly edgeLabels: readonly string[];
  readonly arrows: number;
  /** The sections of parallel states (Mermaid draws each `--`-separated part as one). */
  readonly regions: number;
}

let browser: Browser;
let page: Page;
let renders = 0;

beforeAll(async () => {
  browser = await launchChromium();
  page = await browser.newPage();
  await page.setContent('<!doctype html><html><body></body></html>');
  await page.addScriptTag({ path: MERMAID.pathname });
  await page.evaluate('mermaid.initialize({ startOnLoad: false })');
}, 60_000);

afterAll(async () => {
  await browser?.close();
});

function render(text: string): Promise<Rendered> {
  const id = `diagram${renders++}`;
  return page.evaluate(`(${RENDER})(${JSON.stringify([id, text])})`) as Promise<Rendered>;
}

const transitionsOf = (node: AnyStateNode): AnyTransitionDefinition[] => [
  ...[...node.transitions.values()].flat(),
  ...(node.always ?? []),
];
const isBox = (node: AnyStateNode) => node.type === 'compound' || node.type === 'parallel';

/** Mermaid's node ids are `<diagram>-state-<our id>-<n>`; start and end markers are left out. */
function ourId(nodeId: string): string | undefined {
  const id = /-state-(.+)-\d+$/.exec(nodeId)?.[1];
  return id && !/_(start|end)$/.test(id) ? id : undefined;
}

function expectations(machine: AnyStateMachine, text: string) {
  const nodes = nodesOf(machine);
  const transitions = [machine.root, ...nodes].flatMap(transitionsOf);
  const targeted = transitions.filter((t) => (t.target ?? []).length > 0);
  const anyNodes = [...text.matchAll(/^\s*state "any state[^"]*" as (\S+)$/gm)].map((m) => m[1]);
  return {
    simple: [...nodes.filter((n) => !isBox(n)).map((n) => stateIdOf(n.path)), ...anyNodes].sort(),
    // A parallel machine is drawn as a box of its regions, `s_`.
    boxes: [...(machine.root.type === 'parallel' ? [machine.root] : []), ...nodes]
      .filter(isBox)
      .map((n) => stateIdOf(n.path))
      .sort(),
    labels: targeted.flatMap((t) => (t.target ?? []).map(() => transitionLabel(t))).sort(),
    arrows:
      targeted.reduce((sum, t) => sum + (t.target?.length ?? 0), 0) +
      [machine.root, ...nodes].filter((n) => n.type === 'compound').length +
      nodes.filter((n) => n.type === 'final').length +
      nodes.filter((n) => n.type === 'history' && n.config.target !== undefined).length,
    keys: nodes.filter((n) => !isBox(n) && n.type !== 'history'),
  };
}

describe('toMermaid output rendered by mermaid in Chromium', () => {
  for (const [name, machine] of Object.entries(machines)) {
    it(`renders ${name} with every state, arrow and label`, async () => {
      const text = toMermaid(machine);
      const rendered = await render(text);
      const expected = expectations(machine, text);
      expect(rendered.svg).toBe(true);
      const simple = rendered.nodes.map((n) => ourId(n.id)).filter((id) => id !== undefined);
      expect(simple.sort()).toEqual(expected.simple);
      expect([...rendered.clusters].sort()).toEqual(expected.boxes);
      expect(rendered.arrows).toBe(expected.arrows);
      expect([...rendered.edgeLabels].sort()).toEqual(expected.labels);
      for (const node of expected.keys) {
        const drawn = rendered.nodes.find((n) => ourId(n.id) === stateIdOf(node.path));
        expect(drawn?.text.startsWith(node.key), node.key).toBe(true);
      }
    });
  }

  it('shows entry actions and transitions without a target inside the state, unescaped', async () => {
    const rendered = await render(toMermaid(machines.awkward as AnyStateMachine));
    const state = rendered.nodes.find((n) => ourId(n.id) === 's_default');
    expect(state?.text).toBe('defaultentry / log #1; 50%');
  });

  it("draws a parallel machine's regions apart and what it does in any state", async () => {
    const rendered = await render(toMermaid(machines.parallelRoot as AnyStateMachine));
    expect(rendered.clusters).toContain('s_');
    expect(rendered.regions).toBe(2);
    const any = rendered.nodes.find((n) => ourId(n.id) === 'any');
    expect(any?.text).toBe('any stateentry / bootexit / shutdowninvoke heartbeatPING / log');
    expect(rendered.edgeLabels).toContain('RESET');
  });

  it('keeps labels and names that hold Mermaid line keywords (direction LR, [[fork]])', async () => {
    const rendered = await render(toMermaid(machines.awkward as AnyStateMachine));
    expect(rendered.edgeLabels).toEqual(
      expect.arrayContaining(['direction LR', 'then Direction rl']),
    );
    const text = (key: string) =>
      rendered.nodes.find((n) => ourId(n.id) === stateIdOf([key]))?.text;
    expect(text('turn direction TB')).toBe('turn direction TBentry / set direction BT');
    expect(text('[[fork]]')).toBe('[[fork]]');
  });

  it('rejects text that is not a diagram (the check can fail)', async () => {
    await expect(render('stateDiagram-v2\n  [*] --> note')).rejects.toThrow(/Parse error/);
  });
});
