// A chat page for a durable chain, with a tool a person approves in the browser: `npm run chat`
// in a clone, then open the address it prints. The page is the AI SDK's own chat client
// (`AbstractChat` + `DefaultChatTransport` from `ai`), bundled in memory at start; the run is
// streamed to it with toUIMessageStream, pauses while it waits for the person, and goes on
// when the browser's answer is decided with decideUIApprovals. Runs are journaled to a
// temporary folder, removed on exit. Ask it to drop a table. PORT picks the port (default: a
// free one); with OPENAI_API_KEY (or another provider's variables) it talks to a real model.
import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { readFile, rm } from 'node:fs/promises';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import {
  approvals,
  createChain,
  defineTool,
  fileStore,
  type Message,
  StatecraftError,
  userMessage,
} from 'statecraft';
import {
  decideUIApprovals,
  toUIMessageStream,
  type UIStreamSource,
  writeUIMessageStream,
} from 'statecraft/ai-sdk';
import { ScriptedModel } from 'statecraft/testing';
import { z } from 'zod';
import { modelFromEnv } from './model-from-env.js';

const dropTable = defineTool({
  name: 'drop_table',
  description: 'Drops a database table.',
  input: z.object({ table: z.string() }),
  needsApproval: true, // a person decides in the browser before it runs
  execute: ({ table }) => ({ dropped: table }),
});

/** The model without a key: drops the table the user names, after the person approves. */
const scripted = new ScriptedModel(({ messages }) => {
  const all = messages.toArray();
  const last = all.at(-1);
  const words = (text: string) => ({ text, chunks: text.split(/(?<= )/) });
  if (last?.role === 'tool') {
    return words(
      last.success
        ? `Done: table ${String((last.output as { dropped: string }).dropped)} is gone.`
        : `I did not drop it (${last.error}).`,
    );
  }
  const text = last?.role === 'user' ? last.content : '';
  const table = /\b(?:drop|delete)\s+(?:the\s+)?(?:table\s+)?(\w+)/i.exec(text)?.[1];
  if (table === undefined)
    return words('I can drop tables for you: ask me to drop one, say "drop the tmp_2024 table".');
  return { toolCalls: [{ id: `call_${all.length}`, name: 'drop_table', arguments: { table } }] };
});

const chosen = await modelFromEnv();
const chain = createChain({
  model: chosen?.model ?? scripted,
  tools: [dropTable],
  systemPrompt: 'You help with a database. Drop a table only through the drop_table tool.',
});
const dir = mkdtempSync(`${tmpdir()}/statecraft-chat-`);
const store = fileStore(dir);

/**
 * The run each chat (the client's chat id) is on, and its events, read across requests: held
 * while the run goes on (it may wait on a person between requests), forgotten when it ends.
 */
interface HeldRun {
  readonly runId: string;
  readonly events: UIStreamSource;
  readonly stop: AbortController;
}
const chats = new Map<string, HeldRun>();
/** Chats held at most: past it the oldest, a run left waiting on a person, is let go. */
const MAX_CHATS = 100;

function hold(chatId: string, run: HeldRun): void {
  // A new message while the last run still waits on a person: that run is let go.
  chats.get(chatId)?.stop.abort();
  chats.delete(chatId);
  const oldest = chats.entries().next().value;
  if (chats.size >= MAX_CHATS && oldest !== undefined) {
    oldest[1].stop.abort();
    chats.delete(oldest[0]);
  }
  chats.set(chatId, run);
}

/** The run's events, forgetting the chat once they end (done, failed or stopped). */
async function* forgettingOnEnd(chatId: string, runId: string, events: UIStreamSource) {
  try {
    yield* events;
  } finally {
    if (chats.get(chatId)?.runId === runId) chats.delete(chatId);
  }
}

interface UIPart {
  readonly type: string;
  readonly text?: string;
}
interface UIMessage {
  readonly id: string;
  readonly role: string;
  readonly parts: readonly UIPart[];
}

/** The conversation's text, as the chain's input: the run keeps its own record of tool calls. */
function transcriptOf(messages: readonly UIMessage[]): Message[] {
  return messages.flatMap((message): Message[] => {
    const text = message.parts
      .filter((part) => part.type === 'text')
      .map((part) => part.text ?? '')
      .join('');
    if (message.role === 'user') return [userMessage(text)];
    if (message.role === 'assistant' && text !== '')
      return [{ role: 'assistant', content: text, toolCalls: [] }];
    return [];
  });
}

async function chat(request: IncomingMessage, response: ServerResponse): Promise<void> {
  let size = 0;
  const body: Buffer[] = [];
  for await (const piece of request as AsyncIterable<Buffer>) {
    size += piece.length;
    if (size > 1_000_000) return void response.writeHead(413).end();
    body.push(piece);
  }
  const { id: chatId, messages } = JSON.parse(Buffer.concat(body).toString('utf8')) as {
    id: string;
    messages: UIMessage[];
  };
  const last = messages.at(-1);
  if (last?.role === 'assistant') {
    // The person answered an approval: post it on the run, then write what the run does next
    // into the same assistant message.
    const held = chats.get(chatId);
    if (held === undefined)
      return void response.writeHead(409).end('This chat has no run here: send a new message.');
    await decideUIApprovals(approvals(store), messages, { runId: held.runId });
    const stream = toUIMessageStream(held.events, {
      runId: held.runId,
      messageId: last.id,
      pauseOnApproval: true,
    });
    return writeUIMessageStream(response, stream);
  }
  const runId = `chat-${randomUUID()}`;
  const stop = new AbortController();
  const events = forgettingOnEnd(
    chatId,
    runId,
    chain.stream({ messages: transcriptOf(messages) }, { runId, store, signal: stop.signal }),
  );
  hold(chatId, { runId, events, stop });
  return writeUIMessageStream(
    response,
    toUIMessageStream(events, { runId, pauseOnApproval: true }),
  );
}

const here = (file: string) => fileURLToPath(new URL(file, import.meta.url));
const page = await readFile(here('chat/index.html'), 'utf8');
const bundled = await build({
  entryPoints: [here('chat/client.js')],
  bundle: true,
  format: 'esm',
  platform: 'browser',
  minify: true,
  write: false,
  logLevel: 'silent',
});
const client = bundled.outputFiles[0]?.text ?? '';

/** The names this server answers to: a page served under another name is another site's. */
const LOCAL_NAMES = ['127.0.0.1', 'localhost', '[::1]'];

/**
 * Why a request is refused, or undefined. The server listens on 127.0.0.1 only, yet a web page
 * elsewhere can still reach it: through DNS rebinding (its own name resolved to 127.0.0.1,
 * which sends that name as Host), or by posting text/plain cross-origin, which a browser sends
 * without asking. Either could start runs or approve a call with no person.
 */
function refusal(request: IncomingMessage): { status: number; text: string } | undefined {
  const port = (server.address() as { port: number }).port;
  const host = request.headers.host ?? '';
  if (!LOCAL_NAMES.some((name) => host === `${name}:${port}`))
    return { status: 403, text: `This chat answers http://127.0.0.1:${port}/ only.` };
  const origin = request.headers.origin;
  if (origin !== undefined && origin !== `http://${host}`)
    return { status: 403, text: 'Requests from other pages are refused.' };
  const type = (request.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase();
  if (request.method === 'POST' && type !== 'application/json')
    return { status: 415, text: 'Send the chat as application/json.' };
  return undefined;
}

const server = createServer((request, response) => {
  const refused = refusal(request);
  if (refused !== undefined)
    return void response
      .writeHead(refused.status, { 'content-type': 'text/plain' })
      .end(refused.text);
  const path = new URL(request.url ?? '/', 'http://localhost').pathname;
  if (request.method === 'POST' && path === '/api/chat') {
    chat(request, response).catch((error: unknown) => {
      const message = StatecraftError.isInstance(error)
        ? error.message
        : 'The request could not be read';
      if (!response.headersSent)
        response.writeHead(400, { 'content-type': 'text/plain' }).end(message);
      else response.end();
    });
    return;
  }
  if (request.method === 'GET' && path === '/') {
    return void response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(page);
  }
  if (request.method === 'GET' && path === '/client.js') {
    return void response.writeHead(200, { 'content-type': 'text/javascript' }).end(client);
  }
  response.writeHead(404).end();
});
server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  console.log(
    `chat on ${chosen?.description ?? 'the embedded scripted model (set OPENAI_API_KEY for a real one)'}`,
  );
  console.log(`chat: http://127.0.0.1:${port}/`);
});

async function stop(): Promise<void> {
  server.close();
  server.closeAllConnections();
  await rm(dir, { recursive: true, force: true });
  process.exit(0);
}
process.once('SIGINT', () => void stop());
process.once('SIGTERM', () => void stop());
