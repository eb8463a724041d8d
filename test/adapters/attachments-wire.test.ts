// Attachments on the wire: what each adapter's request mapping makes of a user message's and a
// tool result's images and files (OpenAI Chat and Responses, Anthropic, Gemini), and the clear
// error for a type a provider cannot take, raised while mapping, before any HTTP request.
import type OpenAI from 'openai';
import {
  type Attachment,
  assistantMessage,
  attachment,
  InputError,
  type Message,
  Transcript,
  toolResultMessage,
  userMessage,
} from 'statecraft';
import { toAnthropicParams } from 'statecraft/anthropic';
import { geminiRequest } from 'statecraft/gemini';
import type { ModelRequest } from 'statecraft/model';
import { describe, expect, it } from 'vitest';
import { chatRequestParams } from '../../adapters/models/openai/chat-request.js';
import {
  responsesInput,
  responsesRequestParams,
} from '../../adapters/models/openai/responses-request.js';

// A 1×1 PNG, the first bytes of a PDF, a WAV header and a text file, as base64.
const PNG_DATA =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=';
const PDF_DATA = 'JVBERi0xLjQK';
const WAV_DATA = 'UklGRiQAAABXQVZF';
const png = attachment({ data: PNG_DATA, name: 'chart.png' });
const pdf = attachment({ data: PDF_DATA, name: 'report.pdf' });
const wav = attachment({ data: WAV_DATA, mediaType: 'audio/wav' });
const text = attachment({
  data: Buffer.from('a,b\n1,2\n').toString('base64'),
  mediaType: 'text/csv',
});
const imageUrl = attachment({ url: 'https://example.com/cat.jpg' });
const pdfUrl = attachment({ url: 'https://example.com/paper.pdf' });
const PNG_URL = `data:image/png;base64,${PNG_DATA}`;
const PDF_URL = `data:application/pdf;base64,${PDF_DATA}`;

const request = (messages: Message[]): ModelRequest => ({ messages: Transcript.from(messages) });

/** A step with two tool calls whose results carry attachments, then the user's next message. */
function toolStep(first: readonly Attachment[], second: readonly Attachment[]): Message[] {
  return [
    userMessage('Chart sales and costs'),
    assistantMessage('', [
      { id: 'call_1', name: 'chart', arguments: { series: 'sales' } },
      { id: 'call_2', name: 'chart', arguments: { series: 'costs' } },
      { id: 'call_3', name: 'total', arguments: {} },
    ]),
    toolResultMessage({
      toolCallId: 'call_1',
      name: 'chart',
      output: { drawn: 'sales' },
      success: true,
      attachments: first,
    }),
    toolResultMessage({
      toolCallId: 'call_2',
      name: 'chart',
      output: { drawn: 'costs' },
      success: true,
      attachments: second,
    }),
    toolResultMessage({ toolCallId: 'call_3', name: 'total', output: 42, success: true }),
    userMessage('Thanks'),
  ];
}

/** What a mapping throws, or a failure when it does not. */
function thrown(map: () => unknown): InputError {
  try {
    map();
  } catch (error) {
    expect(InputError.isInstance(error)).toBe(true);
    return error as InputError;
  }
  throw new Error('expected the mapping to throw');
}

describe('OpenAI Chat Completions', () => {
  const chat = (messages: Message[]) => chatRequestParams(request(messages), { model: 'gpt-4.1' });

  it('sends a user message with attachments as a content array: text, image_url, file, input_audio', () => {
    const { messages } = chat([userMessage('What is in these?', [png, imageUrl, pdf, wav])]);
    expect(messages).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'What is in these?' },
          { type: 'image_url', image_url: { url: PNG_URL } },
          { type: 'image_url', image_url: { url: 'https://example.com/cat.jpg' } },
          { type: 'file', file: { file_data: PDF_URL, filename: 'report.pdf' } },
          { type: 'input_audio', input_audio: { data: WAV_DATA, format: 'wav' } },
        ],
      },
    ]);
  });

  it("sends a step's tool-result attachments in one user message right after its tool messages", () => {
    const { messages } = chat(toolStep([png], [png, pdf]));
    expect(messages.map((m) => m.role)).toEqual([
      'user',
      'assistant',
      'tool',
      'tool',
      'tool',
      'user', // the attachments, after the step's last tool message
      'user',
    ]);
    // The tool messages themselves are text, as before attachments existed.
    expect(messages[2]).toEqual({
      role: 'tool',
      tool_call_id: 'call_1',
      content: '{"drawn":"sales"}',
    });
    expect(messages[5]).toEqual({
      role: 'user',
      content: [
        {
          type: 'text',
          text: 'Attachments returned by the tool call chart (id call_1), 1 item:',
        },
        { type: 'image_url', image_url: { url: PNG_URL } },
        {
          type: 'text',
          text: 'Attachments returned by the tool call chart (id call_2), 2 items:',
        },
        { type: 'image_url', image_url: { url: PNG_URL } },
        { type: 'file', file: { file_data: PDF_URL, filename: 'report.pdf' } },
      ],
    });
    expect(messages[6]).toEqual({ role: 'user', content: 'Thanks' });
  });

  it('puts the attachments message last when the transcript ends on the tool results', () => {
    const { messages } = chat(toolStep([png], []).slice(0, -1));
    expect(messages.map((m) => m.role)).toEqual([
      'user',
      'assistant',
      'tool',
      'tool',
      'tool',
      'user',
    ]);
  });

  it('refuses a file by URL and a type it cannot take, naming the type and what to do', () => {
    const byUrl = thrown(() => chat([userMessage('Read this', [pdfUrl])]));
    expect(byUrl.message).toBe(
      "messages[0].attachments[0]: OpenAI Chat Completions cannot take application/pdf files by URL (https://example.com/paper.pdf); only images may be URLs. Download it and pass its bytes (attachment({ data, mediaType: 'application/pdf' })), or use OpenAIResponsesModel, which takes file URLs.",
    );
    const csv = thrown(() => chat(toolStep([], [text])));
    expect(csv.message).toMatch(
      /^messages\[3\]\.attachments\[0\]: OpenAI Chat Completions cannot take text\/csv attachments; it takes images, PDFs and WAV or MP3 audio\./,
    );
  });
});

describe('OpenAI Responses', () => {
  // Through the request mapping; `input` is always the item list this adapter builds.
  const responses = (messages: Message[]) => ({
    input: responsesRequestParams(request(messages), { model: 'gpt-5' })
      .input as OpenAI.Responses.ResponseInputItem[],
  });

  it('sends input_text, input_image and input_file parts in a user message', () => {
    const { input } = responses([userMessage('Compare', [png, imageUrl, pdf, pdfUrl, text])]);
    expect(input).toEqual([
      {
        type: 'message',
        role: 'user',
        content: [
          { type: 'input_text', text: 'Compare' },
          { type: 'input_image', image_url: PNG_URL, detail: 'auto' },
          { type: 'input_image', image_url: 'https://example.com/cat.jpg', detail: 'auto' },
          { type: 'input_file', file_data: PDF_URL, filename: 'report.pdf' },
          { type: 'input_file', file_url: 'https://example.com/paper.pdf' },
          {
            type: 'input_file',
            file_data: `data:text/csv;base64,${text.data}`,
            filename: 'attachment.csv',
          },
        ],
      },
    ]);
  });

  it("sends a result's attachments inside its function_call_output, after its text", () => {
    const { input } = responses(toolStep([png], [pdf]));
    const outputs = input.filter((item) => item.type === 'function_call_output');
    expect(outputs).toEqual([
      {
        type: 'function_call_output',
        call_id: 'call_1',
        output: [
          { type: 'input_text', text: '{"drawn":"sales"}' },
          { type: 'input_image', image_url: PNG_URL, detail: 'auto' },
        ],
      },
      {
        type: 'function_call_output',
        call_id: 'call_2',
        output: [
          { type: 'input_text', text: '{"drawn":"costs"}' },
          { type: 'input_file', file_data: PDF_URL, filename: 'report.pdf' },
        ],
      },
      // A result without attachments keeps its plain text output.
      { type: 'function_call_output', call_id: 'call_3', output: '42' },
    ]);
  });

  it('refuses audio, which the Responses API cannot take', () => {
    expect(thrown(() => responses([userMessage('Listen', [wav])])).message).toMatch(
      /^messages\[0\]\.attachments\[0\]: the OpenAI Responses API cannot take audio \(audio\/wav\)\. Use OpenAIChatModel/,
    );
  });
});

describe('Anthropic', () => {
  const anthropic = (messages: Message[]) =>
    toAnthropicParams(request(messages), {
      modelId: 'claude-sonnet-5-5',
      maxTokens: 1024,
      midConversationSystem: 'user-note',
    });

  it('sends image and document blocks before the text of a user message', () => {
    const { messages } = anthropic([userMessage('Summarise', [png, imageUrl, pdf, pdfUrl, text])]);
    expect(messages).toEqual([
      {
        role: 'user',
        content: [
          { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG_DATA } },
          { type: 'image', source: { type: 'url', url: 'https://example.com/cat.jpg' } },
          {
            type: 'document',
            source: { type: 'base64', media_type: 'application/pdf', data: PDF_DATA },
            title: 'report.pdf',
          },
          { type: 'document', source: { type: 'url', url: 'https://example.com/paper.pdf' } },
          {
            type: 'document',
            source: { type: 'text', media_type: 'text/plain', data: 'a,b\n1,2\n' },
          },
          { type: 'text', text: 'Summarise' },
        ],
      },
    ]);
  });

  it('sends tool-result attachments inside the tool_result content, after its text', () => {
    const { messages } = anthropic(toolStep([png], [pdf]));
    expect(messages[2]).toEqual({
      role: 'user',
      content: [
        {
          type: 'tool_result',
          tool_use_id: 'call_1',
          content: [
            { type: 'text', text: '{"drawn":"sales"}' },
            { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG_DATA } },
          ],
        },
        {
          type: 'tool_result',
          tool_use_id: 'call_2',
          content: [
            { type: 'text', text: '{"drawn":"costs"}' },
            {
              type: 'document',
              source: { type: 'base64', media_type: 'application/pdf', data: PDF_DATA },
              title: 'report.pdf',
            },
          ],
        },
        // Without attachments, the content stays the plain text it always was.
        { type: 'tool_result', tool_use_id: 'call_3', content: '42' },
        { type: 'text', text: 'Thanks' },
      ],
    });
  });

  it('refuses audio, an image type it cannot read and a text file by URL', () => {
    expect(thrown(() => anthropic([userMessage('Listen', [wav])])).message).toMatch(
      /^messages\[0\]\.attachments\[0\]: Anthropic cannot take audio\/wav attachments/,
    );
    const tiff = attachment({ data: 'AAAA', mediaType: 'image/tiff' });
    expect(thrown(() => anthropic(toolStep([tiff], []))).message).toMatch(
      /^messages\[2\]\.attachments\[0\]: Anthropic cannot take image\/tiff images/,
    );
    const csvUrl = attachment({ url: 'https://example.com/a.csv' });
    expect(thrown(() => anthropic([userMessage('Read', [csvUrl])])).message).toMatch(
      /cannot take text\/csv files by URL/,
    );
  });
});

describe('Gemini', () => {
  const gemini = (model: string, messages: Message[]) =>
    geminiRequest(request(messages), { model }).contents;

  it('sends inlineData and fileData parts after the text of a user turn', () => {
    expect(gemini('gemini-2.5-flash', [userMessage('Describe', [png, pdfUrl])])).toEqual([
      {
        role: 'user',
        parts: [
          { text: 'Describe' },
          { inlineData: { mimeType: 'image/png', data: PNG_DATA } },
          { fileData: { mimeType: 'application/pdf', fileUri: 'https://example.com/paper.pdf' } },
        ],
      },
    ]);
  });

  it('on Gemini 3 and later, sends tool-result attachments in functionResponse.parts', () => {
    const contents = gemini('gemini-3-pro-preview', toolStep([png], [pdf]));
    expect(contents[2]).toEqual({
      role: 'user',
      parts: [
        {
          functionResponse: {
            name: 'chart',
            response: { output: '{"drawn":"sales"}' },
            parts: [{ inlineData: { mimeType: 'image/png', data: PNG_DATA } }],
          },
        },
        {
          functionResponse: {
            name: 'chart',
            response: { output: '{"drawn":"costs"}' },
            parts: [{ inlineData: { mimeType: 'application/pdf', data: PDF_DATA } }],
          },
        },
        { functionResponse: { name: 'total', response: { output: '42' } } },
        { text: 'Thanks' },
      ],
    });
  });

  it("before Gemini 3, sends them as parts after the step's function responses, each after its call", () => {
    for (const model of ['gemini-2.5-flash', 'models/gemini-1.5-pro', 'gemini-flash-latest']) {
      const contents = gemini(model, toolStep([png], [pdf]));
      expect(contents[2]).toEqual({
        role: 'user',
        parts: [
          { functionResponse: { name: 'chart', response: { output: '{"drawn":"sales"}' } } },
          { functionResponse: { name: 'chart', response: { output: '{"drawn":"costs"}' } } },
          { functionResponse: { name: 'total', response: { output: '42' } } },
          { text: 'Attachments returned by the tool call chart (id call_1), 1 item:' },
          { inlineData: { mimeType: 'image/png', data: PNG_DATA } },
          { text: 'Attachments returned by the tool call chart (id call_2), 1 item:' },
          { inlineData: { mimeType: 'application/pdf', data: PDF_DATA } },
          { text: 'Thanks' },
        ],
      });
    }
  });
});

describe('messages without attachments', () => {
  it('map exactly as before attachments existed', () => {
    const plain = toolStep([], []).map((message) =>
      message.role === 'tool'
        ? toolResultMessage({
            toolCallId: message.toolCallId,
            name: message.name,
            output: message.output,
            success: true,
          })
        : message,
    );
    const chat = chatRequestParams(request(plain), { model: 'm' }).messages;
    expect(chat.every((m) => typeof m.content === 'string' || m.content === null)).toBe(true);
    expect(chat).toHaveLength(6);
    const responses = responsesInput(plain).input;
    expect(
      responses.every((item) => !('content' in item) || typeof item.content === 'string'),
    ).toBe(true);
    expect(responses.every((item) => !('output' in item) || typeof item.output === 'string')).toBe(
      true,
    );
    const contents = geminiRequest(request(plain), { model: 'gemini-3-pro' }).contents;
    expect(JSON.stringify(contents)).not.toMatch(/"parts":\[\{"inlineData|"fileData|Attachments/);
  });
});
