// SPEC D1: the Stately inspector recipe, offline. `createWebSocketInspector` from
// @statelyai/inspect sends a run's inspection events to a WebSocket server; here the server is
// a local one on 127.0.0.1, and the test reads what it receives: the chain's registration,
// the events it was sent and its snapshots, as the Stately inspector would.
import type { AddressInfo } from 'node:net';
import { createWebSocketInspector, type StatelyInspectionEvent } from '@statelyai/inspect';
import { createChain, defineTool } from 'statecraft';
import { ScriptedModel } from 'statecraft/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocketServer } from 'ws';
import { z } from 'zod';

interface Received {
  readonly messages: StatelyInspectionEvent[];
  /** Resolves with the first message (past or future) that `predicate` accepts. */
  until(predicate: (message: StatelyInspectionEvent) => boolean): Promise<StatelyInspectionEvent>;
}

const servers: WebSocketServer[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) {
    for (const client of server.clients) client.terminate();
    await new Promise((resolve) => server.close(resolve));
  }
});

async function inspectorServer(): Promise<{ url: string; received: Received }> {
  const server = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  servers.push(server);
  await new Promise<void>((resolve) => server.once('listening', resolve));
  const messages: StatelyInspectionEvent[] = [];
  const waiting = new Set<{
    predicate: (m: StatelyInspectionEvent) => boolean;
    resolve: (m: StatelyInspectionEvent) => void;
  }>();
  server.on('connection', (socket) => {
    socket.on('message', (data) => {
      const message = JSON.parse(String(data)) as StatelyInspectionEvent;
      messages.push(message);
      for (const waiter of waiting) {
        if (!waiter.predicate(message)) continue;
        waiting.delete(waiter);
        waiter.resolve(message);
      }
    });
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `ws://127.0.0.1:${port}`,
    received: {
      messages,
      until(predicate) {
        const found = messages.find(predicate);
        if (found) return Promise.resolve(found);
        return new Promise((resolve) => waiting.add({ predicate, resolve }));
      },
    },
  };
}

const add = defineTool({
  name: 'add',
  description: 'Adds two numbers.',
  input: z.object({ a: z.number(), b: z.number() }),
  execute: ({ a, b }) => a + b,
});

const stateValueOf = (message: StatelyInspectionEvent) =>
  message.type === '@xstate.snapshot' ? (message.snapshot as { value?: unknown }).value : undefined;

describe('the Stately inspector over a local WebSocket (SPEC D1)', () => {
  it("receives the chain's registration, its events and its states", async () => {
    const { url, received } = await inspectorServer();
    const inspector = createWebSocketInspector({ url });
    try {
      const chain = createChain({
        model: new ScriptedModel([
          { toolCalls: [{ name: 'add', arguments: { a: 2, b: 3 } }] },
          { text: 'The sum is 5.' },
        ]),
        tools: [add],
      });
      const result = await chain.invoke('What is 2 + 3?', { inspect: inspector.inspect });
      expect(result.text).toBe('The sum is 5.');

      // The last snapshot is sent after the run resolves: wait for it, not for a time.
      await received.until((m) => stateValueOf(m) === 'succeeded');

      const registration = received.messages.find(
        (m) => m.type === '@xstate.actor' && m.name === 'chain',
      );
      expect(registration, 'the chain actor was registered').toBeDefined();
      const chainSession = registration?.sessionId;
      // The machine definition travels with the registration: what the inspector draws.
      const definition = JSON.parse(
        String(registration?.type === '@xstate.actor' && registration.definition),
      );
      expect(Object.keys(definition.states)).toEqual(
        expect.arrayContaining(['thinking', 'doing', 'validating', 'succeeded', 'failed']),
      );
      // The invoked effects actor is a child of the chain, in the same inspected system.
      expect(received.messages).toContainEqual(
        expect.objectContaining({ type: '@xstate.actor', parentId: chainSession }),
      );

      const ofChain = received.messages.filter((m) => m.sessionId === chainSession);
      const states = ofChain.map(stateValueOf).filter((v) => v !== undefined);
      expect(states).toEqual(expect.arrayContaining(['thinking', 'doing', 'succeeded']));
      expect(states.indexOf('thinking')).toBeLessThan(states.indexOf('doing'));
      expect(states.indexOf('doing')).toBeLessThan(states.indexOf('succeeded'));
      const events = ofChain.flatMap((m) => (m.type === '@xstate.event' ? [m.event.type] : []));
      expect(events).toEqual(expect.arrayContaining(['callModel.done', 'executeTools.done']));
      // A model response event carries the tool call the model made.
      const modelDone = ofChain.find(
        (m) => m.type === '@xstate.event' && m.event.type === 'callModel.done',
      );
      expect(JSON.stringify(modelDone)).toContain('"name":"add"');
    } finally {
      inspector.stop();
    }
  });
});
