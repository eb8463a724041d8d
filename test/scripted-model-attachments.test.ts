// ScriptedModel and attachments: its recorded requests hold them as sent, a script function
// reads them, and a call nobody scripted says what the last message carried.
import { attachment, createChain, userMessage } from 'statecraft';
import { ScriptExhaustedError, ScriptedModel } from 'statecraft/testing';
import { describe, expect, it } from 'vitest';

const png = attachment({
  data: new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0, 1]),
  name: 'screen.png',
});
const pdf = attachment({ url: 'https://example.com/r.pdf' });

describe('ScriptedModel with attachments', () => {
  it('records them and shows them to a script function', async () => {
    const model = new ScriptedModel((request) => {
      const last = request.messages.last;
      const names =
        last?.role === 'user' ? (last.attachments ?? []).map((a) => a.name ?? a.mediaType) : [];
      return { text: `I see ${names.join(' and ')}` };
    });
    const result = await createChain({ model }).invoke({
      messages: [userMessage('Look', [png, pdf])],
    });
    expect(result.text).toBe('I see screen.png and application/pdf');
    const sent = model.lastRequest?.messages.last;
    expect(sent?.role === 'user' && sent.attachments).toEqual([png, pdf]);
  });

  it('names them when a call was not scripted', async () => {
    const model = new ScriptedModel([]);
    const failure = await createChain({ model })
      .invoke({ messages: [userMessage('Look', [png, pdf])] })
      .catch((error: unknown) => error);
    const cause = (failure as { cause?: unknown }).cause ?? failure;
    expect(String((cause as Error).message)).toContain(
      '(with 2 attachment(s): image/png screen.png, application/pdf)',
    );
    expect(cause).toBeInstanceOf(ScriptExhaustedError);
  });
});
