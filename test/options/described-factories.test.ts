// The options of the adapters, MCP, the stores, the viewer, Restate's functions, OTel, memory
// and retry are each described once (src/options/describe.ts): the description is what the
// factory checks against, so every key it lists is accepted, a slip of any of them is refused
// naming it, and the defaults it holds are the values the factory runs with.
import { approvals, ConfigError, fromFunction, InMemoryChatMemory, memoryStore } from 'statecraft';
import { AnthropicModel } from 'statecraft/anthropic';
import { GeminiModel } from 'statecraft/gemini';
import { McpToolExecutor } from 'statecraft/mcp';
import { OpenAIChatModel, OpenAIResponsesModel, openAICompatible } from 'statecraft/openai';
import { otelObserver } from 'statecraft/otel';
import {
  registerDeployment,
  restateStore,
  serveCluster,
  serveWorker,
  startLocalRestate,
  statecraftServices,
} from 'statecraft/restate';
import { ScriptedModel } from 'statecraft/testing';
import { describe, expect, it } from 'vitest';
import { ANTHROPIC_MODEL_OPTIONS } from '../../adapters/models/anthropic.js';
import { GEMINI_MODEL_OPTIONS } from '../../adapters/models/gemini/options.js';
import { OPENAI_RESPONSES_OPTIONS } from '../../adapters/models/openai/client-options.js';
import { OPENAI_CHAT_OPTIONS, OPENAI_COMPATIBLE_OPTIONS } from '../../adapters/models/openai.js';
import { SCRIPTED_MODEL_OPTIONS } from '../../adapters/models/scripted.js';
import { MCP_CONNECT_OPTIONS, MCP_EXECUTOR_OPTIONS } from '../../adapters/tools/mcp/options.js';
import { STORE_OPTIONS } from '../../src/durable/stores/store-options.js';
import { DEFAULT_IDLE_TIMEOUT_MS } from '../../src/model/idle-watch.js';
import { OTEL_OPTIONS } from '../../src/otel/otel-observer.js';
import { LOCAL_RESTATE_OPTIONS } from '../../src/restate/local-server.js';
import { RESTATE_STORE_OPTIONS } from '../../src/restate/restate-store.js';
import { REGISTER_OPTIONS, SERVICES_OPTIONS, WORKER_OPTIONS } from '../../src/restate/worker.js';
import { CLUSTER_OPTIONS } from '../../src/restate/worker-cluster.js';
import { MEMORY_OPTIONS } from '../../src/runnable/memory.js';
import { RETRY_OPTIONS } from '../../src/runnable/retry-run.js';
import { startViewer, VIEWER_OPTIONS } from '../../src/viewer/server.js';

/** The problems a factory reports for `options`: thrown, or a rejected promise's. */
async function problemsOf(
  make: () => unknown,
): Promise<readonly ConfigError['problems'][number][]> {
  let thrown: unknown;
  try {
    const made = make();
    if (made instanceof Promise) await made;
  } catch (error) {
    thrown = error;
  }
  if (!ConfigError.isInstance(thrown)) throw new Error(`expected a ConfigError, got ${thrown}`);
  return (thrown as ConfigError).problems;
}

/** Stands in for an MCP SDK client: fromClient checks its options after the client. */
const mcpClient = {
  callTool: () => undefined,
  listTools: () => undefined,
  setNotificationHandler: () => undefined,
} as never;

const identity = fromFunction((x: unknown) => x);

/** Each description, and the public factory that checks options against it. */
const factories: readonly [
  string,
  { readonly where: string; readonly keys: readonly string[] },
  (options: Record<string, unknown>) => unknown,
][] = [
  ['OpenAIChatModel', OPENAI_CHAT_OPTIONS, (o) => new OpenAIChatModel(o as never)],
  ['OpenAIResponsesModel', OPENAI_RESPONSES_OPTIONS, (o) => new OpenAIResponsesModel(o as never)],
  ['openAICompatible', OPENAI_COMPATIBLE_OPTIONS, (o) => openAICompatible('ollama', o as never)],
  ['AnthropicModel', ANTHROPIC_MODEL_OPTIONS, (o) => new AnthropicModel(o as never)],
  ['GeminiModel', GEMINI_MODEL_OPTIONS, (o) => new GeminiModel(o as never)],
  ['ScriptedModel', SCRIPTED_MODEL_OPTIONS, (o) => new ScriptedModel(() => ({ text: '' }), o)],
  [
    'McpToolExecutor.fromClient',
    MCP_EXECUTOR_OPTIONS,
    (o) => McpToolExecutor.fromClient(mcpClient, o),
  ],
  ['McpToolExecutor.connect', MCP_CONNECT_OPTIONS, (o) => McpToolExecutor.connect(o as never)],
  ['memoryStore', STORE_OPTIONS, (o) => memoryStore(o)],
  // approvals' description is its module's own.
  [
    'approvals',
    { where: 'approvals', keys: ['maxReasonLength'] },
    (o) => approvals(memoryStore(), o),
  ],
  ['startViewer', VIEWER_OPTIONS, (o) => startViewer(o)],
  ['serveWorker', WORKER_OPTIONS, (o) => serveWorker(o as never)],
  ['serveCluster', CLUSTER_OPTIONS, (o) => serveCluster(o as never)],
  ['statecraftServices', SERVICES_OPTIONS, (o) => statecraftServices(o as never)],
  ['registerDeployment', REGISTER_OPTIONS, (o) => registerDeployment(o as never)],
  ['restateStore', RESTATE_STORE_OPTIONS, (o) => restateStore(o as never)],
  ['startLocalRestate', LOCAL_RESTATE_OPTIONS, (o) => startLocalRestate(o)],
  ['otelObserver', OTEL_OPTIONS, (o) => otelObserver(o)],
  ['InMemoryChatMemory', MEMORY_OPTIONS, (o) => new InMemoryChatMemory(o)],
  ['withRetry', RETRY_OPTIONS, (o) => identity.withRetry(o)],
];

describe.each(factories)('%s: its options as described', (_, description, make) => {
  it('refuses a slip of every described key, naming that key and the factory', async () => {
    for (const key of description.keys) {
      const slip = `${key}${key.at(-1)}`;
      const problems = await problemsOf(() => make({ [slip]: true }));
      expect(problems).toContainEqual({
        option: slip,
        message: `is not an option of ${description.where}; did you mean \`${key}\`?`,
      });
      // Only the slip is unknown: every other problem is of a described key.
      for (const problem of problems.filter((p) => p.option !== slip)) {
        expect(description.keys).toContain(problem.option.split('.')[0]);
      }
    }
  });
});

describe('defaults held by the descriptions', () => {
  it('are the values the factories run with', async () => {
    expect(OPENAI_CHAT_OPTIONS.defaults).toEqual({
      provider: 'openai',
      maxTokensField: 'max_completion_tokens',
      idleTimeoutMs: DEFAULT_IDLE_TIMEOUT_MS,
    });
    const chat = new OpenAIChatModel({ model: 'm', apiKey: 'k' });
    expect(chat.provider).toBe(OPENAI_CHAT_OPTIONS.defaults.provider);

    expect(ANTHROPIC_MODEL_OPTIONS.defaults).toEqual({
      maxTokens: 4096,
      idleTimeoutMs: DEFAULT_IDLE_TIMEOUT_MS,
      midConversationSystem: 'user-note',
    });
    expect(SCRIPTED_MODEL_OPTIONS.defaults).toEqual({ modelId: 'scripted-model' });
    expect(new ScriptedModel([]).modelId).toBe('scripted-model');

    expect(STORE_OPTIONS.defaults).toEqual({ timeoutMs: 30_000, maxEntryBytes: 64 * 1024 * 1024 });
    expect(memoryStore().timeoutMs).toBe(STORE_OPTIONS.defaults.timeoutMs);

    expect(MCP_CONNECT_OPTIONS.defaults).toEqual({
      shadowLocalTools: false,
      clientInfo: { name: 'statecraft', version: '0.1.0' },
    });
    expect(VIEWER_OPTIONS.defaults).toEqual({ port: 4319, keepRuns: 100 });
    expect(WORKER_OPTIONS.defaults).toEqual({ port: 9080, host: '127.0.0.1' });
    expect(RESTATE_STORE_OPTIONS.defaults).toEqual({ timeoutMs: 30_000 });
    expect(REGISTER_OPTIONS.defaults).toEqual({ force: false, timeoutMs: 30_000 });
    expect(LOCAL_RESTATE_OPTIONS.defaults).toEqual({ startTimeoutMs: 30_000, log: false });
    expect(OTEL_OPTIONS.defaults).toEqual({ captureContent: false });
    expect(RETRY_OPTIONS.defaults).toMatchObject({ maxAttempts: 3, delayMs: 0 });
    expect(MEMORY_OPTIONS.defaults).toEqual({});
  });

  it('stand for null where a factory always read an option with ??', async () => {
    const viewer = await startViewer({ port: 0, keepRuns: null } as never);
    await viewer.close();
    const chat = new OpenAIChatModel({
      model: 'm',
      apiKey: 'k',
      provider: null,
      maxTokensField: null,
    } as never);
    expect(chat.provider).toBe('openai');
    expect(
      () => new AnthropicModel({ model: 'm', apiKey: 'k', midConversationSystem: null } as never),
    ).not.toThrow();
    // Elsewhere null is a bad value, as it always was: a null client is not no client.
    expect(() => new OpenAIChatModel({ model: 'm', client: null } as never)).toThrow(
      'must be an OpenAI SDK client (new OpenAI({...})) with chat.completions.create',
    );
    expect(() => new AnthropicModel({ model: 'm', apiKey: 'k', maxTokens: null } as never)).toThrow(
      'must be an integer >= 1; got null',
    );
  });

  it('report a slip before the bad values, then the bad values in the described order', async () => {
    const problems = await problemsOf(
      () =>
        new AnthropicModel({
          model: '',
          apiKey: '',
          maxTokens: 0,
          modle: 'x',
          client: {},
        } as never),
    );
    expect(problems.map((p) => p.option)).toEqual([
      'modle',
      'model',
      'maxTokens',
      'client',
      'apiKey',
    ]);
    expect(problems.at(-1)?.message).toBe(
      'cannot be combined with `client`; configure the client itself',
    );
  });
});
