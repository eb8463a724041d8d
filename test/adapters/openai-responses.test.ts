// OpenAIResponsesModel through the real `openai` SDK over HTTP, against a local server on
// 127.0.0.1 replaying recorded Responses API answers (JSON and SSE with named events).
// Nothing leaves the machine; retries use the SDK's own backoff, kept short with
// `retry-after-ms`.
import {
  AbortError,
  type ChainStreamEvent,
  ConfigError,
  createChain,
  ModelError,
} from 'statecraft';
import type { StreamPart } from 'statecraft/model';
import { type OpenAIModelOptions, OpenAIResponsesModel } from 'statecraft/openai';
import { describe, expect, it, vi } from 'vitest';
import {
  fixture,
  jsonFixture,
  type ReplayResponse,
  type ReplayServer,
} from '../support/replay-server.js';
import {
  ANSWER,
  BERLIN,
  json,
  LONDON,
  PARIS,
  rejectionOf,
  request,
  sse,
  useReplayServer,
  weatherTool,
} from './openai-weather.js';

const serve = useReplayServer();

interface InputItem {
  type?: string;
  role?: string;
  content?: unknown;
  call_id?: string;
  name?: string;
  arguments?: string;
  output?: unknown;
}

interface ResponsesBody {
  model: string;
  stream?: boolean;
  instructions?: string;
  tools?: unknown[];
  input: InputItem[];
}

function responsesModel(at: ReplayServer, options: Partial<OpenAIModelOptions> = {}) {
  return new OpenAIResponsesModel({
    model: 'gpt-4.1-mini',
    apiKey: 'sk-test',
    baseURL: `${at.url}/v1`,
    ...options,
  });
}

function bodies(at: ReplayServer): ResponsesBody[] {
  return at.requests.map((request) => request.body as ResponsesBody);
}

const outputs = (body: ResponsesBody | undefined) =>
  (body?.input ?? []).filter((item) => item.type === 'function_call_output');
const functionCalls = (body: ResponsesBody | undefined) =>
  (body?.input ?? []).filter((item) => item.type === 'function_call');

describe('OpenAIResponsesModel over HTTP', () => {
  it('runs a chain through two tool rounds, answering each call_id with function_call_output', async () => {
    const at = await serve([
      json('responses-tool-calls.json'),
      json('responses-tool-call-followup.json'),
      json('responses-text.json'),
    ]);
    const { tool, execute } = weatherTool();
    const chain = createChain({ model: responsesModel(at), tools: [tool] });

    const result = await chain.invoke('Weather in Paris, London and Berlin?');

    expect(result.result).toBe(ANSWER);
    expect(execute).toHaveBeenCalledTimes(3);
    expect(at.requests.map((r) => `${r.method} ${r.path}`)).toEqual(
      Array(3).fill('POST /v1/responses'),
    );
    const [first, second, third] = bodies(at);
    // The chain's system prompt travels as `instructions`, the question as a user message.
    expect(first?.instructions).toEqual(expect.any(String));
    expect(first?.input).toEqual([
      { type: 'message', role: 'user', content: 'Weather in Paris, London and Berlin?' },
    ]);
    expect(first?.tools).toEqual([
      expect.objectContaining({ type: 'function', name: 'get_weather', strict: false }),
    ]);
    expect(functionCalls(second)).toEqual([
      { type: 'function_call', call_id: PARIS, name: 'get_weather', arguments: '{"city":"Paris"}' },
      {
        type: 'function_call',
        call_id: LONDON,
        name: 'get_weather',
        arguments: '{"city":"London"}',
      },
    ]);
    expect(outputs(second)).toEqual([
      { type: 'function_call_output', call_id: PARIS, output: '{"city":"Paris","tempC":18}' },
      { type: 'function_call_output', call_id: LONDON, output: '{"city":"London","tempC":15}' },
    ]);
    expect(outputs(third).map((item) => item.call_id)).toEqual([PARIS, LONDON, BERLIN]);
    expect(outputs(third)[2]?.output).toBe('{"city":"Berlin","tempC":21}');
    expect(result.usage).toEqual({
      inputTokens: 142 + 231 + 1180,
      outputTokens: 46 + 17 + 172,
      totalTokens: 188 + 248 + 1352,
      cachedInputTokens: 1024,
      reasoningTokens: 128,
    });
  });

  it('streams a chain run whose function-call arguments arrive split across events', async () => {
    const at = await serve([sse('responses-tool-calls.sse'), sse('responses-text.sse')]);
    const { tool } = weatherTool();
    const chain = createChain({ model: responsesModel(at), tools: [tool] });

    const events: ChainStreamEvent[] = [];
    for await (const event of chain.stream('Weather in Paris and London?')) events.push(event);

    const calls = events.flatMap((e) => (e.type === 'tool-call' ? [e.toolCall] : []));
    expect(calls).toEqual([
      { id: PARIS, name: 'get_weather', arguments: { city: 'Paris' } },
      { id: LONDON, name: 'get_weather', arguments: { city: 'London' } },
    ]);
    const text = events.flatMap((e) => (e.type === 'text-delta' ? [e.delta] : [])).join('');
    expect(text).toBe(ANSWER);
    expect(events.at(-1)).toMatchObject({
      type: 'final',
      output: { status: 'succeeded', text: ANSWER },
    });
    const [first, second] = bodies(at);
    expect(first?.stream).toBe(true);
    expect(outputs(second).map((item) => item.call_id)).toEqual([PARIS, LONDON]);
  });

  it('streams function-call deltas with index, call_id and name, then each complete call', async () => {
    const at = await serve([sse('responses-tool-calls.sse')]);
    const parts: StreamPart[] = [];
    for await (const part of responsesModel(at).stream(request())) parts.push(part);

    const deltas = parts.flatMap((p) => (p.type === 'tool-call-delta' ? [p] : []));
    expect(deltas.filter((d) => d.id).map((d) => [d.index, d.id, d.name])).toEqual([
      [0, PARIS, 'get_weather'],
      [1, LONDON, 'get_weather'],
    ]);
    expect(parts.filter((p) => p.type === 'tool-call')).toHaveLength(2);
    expect(parts.slice(-2)).toEqual([
      {
        type: 'usage',
        usage: {
          inputTokens: 142,
          outputTokens: 46,
          totalTokens: 188,
          cachedInputTokens: 0,
          reasoningTokens: 0,
        },
      },
      { type: 'finish', finishReason: { unified: 'tool-calls', raw: 'completed' } },
    ]);
  });

  it('retries a 429 with the SDK backoff, then succeeds', async () => {
    const at = await serve([
      {
        status: 429,
        headers: { 'retry-after-ms': '1' },
        json: {
          error: { message: 'Rate limit reached', type: 'requests', code: 'rate_limit_exceeded' },
        },
      },
      json('responses-text.json'),
    ]);
    const response = await responsesModel(at).generate(request());
    expect(response.content).toEqual([{ type: 'text', text: ANSWER }]);
    expect(at.requests).toHaveLength(2);
  });

  it('gives up on a 500 after maxRetries with a retryable ModelError', async () => {
    const failure: ReplayResponse = {
      status: 500,
      headers: { 'retry-after-ms': '1' },
      json: { error: { message: 'The server had an error', type: 'server_error' } },
    };
    const at = await serve([failure, failure]);
    const error = await rejectionOf(responsesModel(at, { maxRetries: 1 }).generate(request()));
    expect(ModelError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ retryable: true, status: 500 });
    expect(at.requests).toHaveLength(2);
  });

  it('aborts mid-stream: rejects with AbortError and leaves no open request', async () => {
    const events = fixture('openai', 'responses-text.sse').split(/(?<=\n\n)/);
    // created, in_progress, output_item.added, content_part.added, the first text delta.
    const at = await serve([{ sse: events.slice(0, 5), hang: true }]);
    const controller = new AbortController();
    const seen: StreamPart[] = [];
    const run = (async () => {
      for await (const part of responsesModel(at).stream(request(), {
        signal: controller.signal,
      })) {
        seen.push(part);
        if (part.type === 'text-delta') controller.abort();
      }
    })();
    const error = await rejectionOf(run);
    expect(AbortError.isInstance(error)).toBe(true);
    expect(seen).toEqual([{ type: 'text-delta', delta: 'Paris' }]);
    await vi.waitFor(() => expect(at.openRequests()).toBe(0));
  });

  it('rejects a stream that reports response.failed with a ModelError', async () => {
    const failed = {
      type: 'response.failed',
      sequence_number: 1,
      response: {
        ...(jsonFixture('openai', 'responses-text.json') as object),
        status: 'failed',
        output: [],
        error: { code: 'server_error', message: 'The model failed to respond.' },
      },
    };
    const at = await serve([
      { sse: [`event: response.failed\ndata: ${JSON.stringify(failed)}\n\n`] },
    ]);
    const run = (async () => {
      for await (const _part of responsesModel(at).stream(request())) {
        // drain
      }
    })();
    const error = await rejectionOf(run);
    expect(ModelError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ retryable: true });
  });

  it('turns malformed tool arguments into a failed result the model sees; the chain finishes', async () => {
    const at = await serve([
      json('responses-malformed-arguments.json'),
      json('responses-text.json'),
    ]);
    const { tool, execute } = weatherTool();
    const chain = createChain({ model: responsesModel(at), tools: [tool] });

    const result = await chain.invoke('Weather in Paris?');

    expect(result.result).toBe(ANSWER);
    expect(execute).not.toHaveBeenCalled();
    const second = bodies(at)[1];
    expect(functionCalls(second)).toEqual([
      {
        type: 'function_call',
        call_id: 'call_Wq7nB2xK9mLt4vRz6pYs3cHd',
        name: 'get_weather',
        arguments: '{"city": Paris}',
      },
    ]);
    const [output] = outputs(second);
    expect(output?.call_id).toBe('call_Wq7nB2xK9mLt4vRz6pYs3cHd');
    expect(output?.output).toContain('not valid JSON');
  });

  it('validates its options, naming the bad one', () => {
    let option: string | undefined;
    try {
      new OpenAIResponsesModel({ model: 'm', client: { chat: {} } as never });
    } catch (error) {
      if (ConfigError.isInstance(error)) option = error.option;
    }
    expect(option).toBe('client');
  });
});
