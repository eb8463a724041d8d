// Images on Restate, for real: a run whose input holds a screenshot and whose tool returns the
// same image in two steps, on 2 worker processes. The model sees all three images (its answer
// says so), the result carries them, and the run's journal in Restate holds their bytes once;
// a worker killed with SIGKILL during the last model call leaves a run that ends the same on
// the other worker. And a call waiting for approval lists through approvals(store).
import {
  approvals,
  attachment,
  type Message,
  type RunDetails,
  type ToolCallDetail,
  userMessage,
} from 'statecraft';
import { describe, expect, it } from 'vitest';
import { useDeployment } from './use-deployment.js';
import {
  LARGE_SCREEN_BYTES,
  modelCallKey,
  SCREEN_BASE64,
  SCREEN_BYTES,
  screenInput,
} from './workload.js';

const deployed = useDeployment({ processes: 2 });

const occurrences = (text: string, part: string) => text.split(part).length - 1;

const until = async (what: string, check: () => Promise<boolean> | boolean, timeoutMs = 60_000) => {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
};

interface ScreenResult {
  readonly text: string;
  readonly transcript: readonly Message[];
  details(): RunDetails;
}

const answerOf = (n: number) =>
  `screen ${n}: 1 from the user, 2 from tools (shot.png, shot.png), the same bytes`;

/** The attachments of the transcript's tool results, by call id. */
function toolAttachments(messages: readonly Message[]) {
  return messages.flatMap((m) =>
    m.role === 'tool' ? [{ callId: m.toolCallId, attachments: m.attachments }] : [],
  );
}

describe('attachments on Restate', { timeout: 120_000 }, () => {
  it("sends the input's image and a tool's two results to the model, and journals the bytes once", async () => {
    const runs = deployed().runs();
    await runs.submit('screen-1', 'screen', screenInput(1));
    const result = await runs.result<ScreenResult>('screen-1', { timeoutMs: 90_000 });
    // Said by the model on the worker: it saw the three images, all the input's bytes.
    expect(result.text).toBe(answerOf(1));

    const image = { mediaType: 'image/png', data: SCREEN_BASE64 };
    const messages = result.transcript;
    expect(messages[0]).toEqual({ role: 'user', content: 'screen 1', attachments: [image] });
    expect(toolAttachments(messages)).toEqual([
      { callId: 'shot1-0', attachments: [{ ...image, name: 'shot.png' }] },
      { callId: 'shot1-1', attachments: [{ ...image, name: 'shot.png' }] },
    ]);
    const details = result.details();
    const summary = { mediaType: 'image/png', name: 'shot.png', size: SCREEN_BYTES.length };
    expect(details.toolCalls.map((call: ToolCallDetail) => call.attachments)).toEqual([
      [summary],
      [summary],
    ]);
    expect(details.toolCalls.map((call) => call.result.attachments?.[0]?.data)).toEqual([
      SCREEN_BASE64,
      SCREEN_BASE64,
    ]);

    // The journal as Restate keeps it: the bytes in the start entry, referred to elsewhere.
    const entries = (await runs.store.read('screen-1')) ?? [];
    expect(entries.at(-1)).toMatchObject({ type: 'end', status: 'succeeded' });
    const journal = JSON.stringify(entries);
    expect(occurrences(journal, SCREEN_BASE64)).toBe(1);
    expect(occurrences(journal, '"$sc":"attachment"')).toBeGreaterThanOrEqual(3);

    // The same id with the same text and another image is another input, and says where.
    const other = attachment({ data: SCREEN_BYTES.slice(0, 1024) });
    await expect(
      runs.submit('screen-1', 'screen', { messages: [userMessage('screen 1', [other])] }),
    ).rejects.toMatchObject({
      code: 'JOURNAL_MISMATCH',
      changes: [{ option: 'messages[0].attachments[0]' }],
    });
  });

  it('ends a run that returned a 1.5 MB screenshot three times: its outcome holds the bytes once', async () => {
    const runs = deployed().runs({ timeoutMs: 60_000 });
    await runs.submit('screen-large', 'screen-large', screenInput(4, LARGE_SCREEN_BYTES));
    // With the bytes inline in the transcript, the tool results and every model request of
    // its details, the outcome was 45 MB sealed, over Restate's 32 MiB message size limit:
    // Restate retried the segment for ever and the run never ended.
    const result = await runs.result<ScreenResult>('screen-large', { timeoutMs: 60_000 });
    expect(result.text).toBe(answerOf(4));
    const base64 = Buffer.from(LARGE_SCREEN_BYTES).toString('base64');
    expect(result.transcript[0]).toMatchObject({ attachments: [{ data: base64 }] });
    expect(result.details().toolCalls.map((call) => call.result.attachments?.[0]?.data)).toEqual([
      base64,
      base64,
    ]);
    // What Restate hands a client attaching to the run: sealed, and not much over the bytes once.
    const attached = await fetch(
      `${deployed().server.url}/restate/workflow/statecraftRun/screen-large/attach`,
    );
    const sealed = await attached.text();
    expect(sealed.length).toBeLessThan(2 * base64.length);
    const journal = JSON.stringify((await runs.store.read('screen-large')) ?? []);
    expect(occurrences(journal, base64)).toBe(1);
  });

  it('ends a run the same when its worker is killed with SIGKILL during the last model call', async () => {
    const runs = deployed().runs();
    const before = deployed().effects().length;
    await runs.submit('screen-kill', 'screen-slow', screenInput(2));

    // Both screenshots journaled, the last model call under way: kill the worker making it.
    let victim: number | undefined;
    await until('the last model call to start', () => {
      const lines = deployed().effects().slice(before);
      const shot = lines.findIndex(
        (line) => line.key === 'screen-kill:shot2-1' && line.phase === 'done',
      );
      if (shot < 0) return false;
      const after = lines.slice(shot + 1);
      const open = after.find(
        (line) =>
          line.kind === 'model' &&
          line.phase === 'start' &&
          !after.some((done) => done.key === line.key && done.phase === 'done'),
      );
      victim = open?.pid;
      return victim !== undefined;
    });
    const killed = victim as number;
    process.kill(killed, 'SIGKILL');

    const result = await runs.result<ScreenResult>('screen-kill', { timeoutMs: 90_000 });
    expect(result.text).toBe(answerOf(2));
    const { modelCalls, toolCalls } = result.details();
    // Resumed from the journal on the other worker: the screenshots and the first two model
    // calls came from there (with their images), the last call was made again.
    expect(toolCalls.map((call) => call.replayed)).toEqual([true, true]);
    expect(toolCalls.map((call) => call.result.attachments?.[0]?.data)).toEqual([
      SCREEN_BASE64,
      SCREEN_BASE64,
    ]);
    expect(modelCalls.map((call) => call.replayed === true)).toEqual([true, true, false]);
    expect(modelCalls.at(-1)?.possiblyRepeated).toBe(true);

    const lines = deployed().effects().slice(before);
    const last = modelCallKey((modelCalls.at(-1) as (typeof modelCalls)[number]).request);
    const lastStarts = lines.filter((line) => line.key === last && line.phase === 'start');
    expect(lastStarts.map((line) => line.pid === killed)).toEqual([true, false]);
    for (const key of ['screen-kill:shot2-0', 'screen-kill:shot2-1']) {
      expect(lines.filter((line) => line.key === key && line.phase === 'start')).toHaveLength(1);
    }

    const journal = JSON.stringify((await runs.store.read('screen-kill')) ?? []);
    expect(occurrences(journal, SCREEN_BASE64)).toBe(1);
  });

  it('lists a call waiting for approval in a Restate run, its ordinary arguments as they were', async () => {
    const runs = deployed().runs();
    await runs.submit('listed-3', 'refund', 'refund 3');
    await until(
      'the run to wait for approval',
      async () => (await runs.status('listed-3'))?.state === 'awaiting-approval',
    );
    const waiting = { runId: 'listed-3', callId: 'f3', tool: 'refund', arguments: { n: 3 } };
    expect(await approvals(runs.store).list('listed-3')).toMatchObject([waiting]);
    const everyRun = await runs.approvals.list();
    expect(everyRun.filter((call) => call.runId === 'listed-3')).toMatchObject([waiting]);

    expect(await runs.approvals.approve('listed-3', 'f3')).toBe(true);
    const result = await runs.result<{ text: string }>('listed-3', { timeoutMs: 60_000 });
    expect(result.text).toBe('refund 3: refund-3');
    expect(await approvals(runs.store).list('listed-3')).toEqual([]);
  });
});
