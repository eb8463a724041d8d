// The pure MCP ↔ statecraft mappings, on plain objects in MCP's wire shapes.
import { describe, expect, it } from 'vitest';
import { providerSafeNames, toToolResult, toToolSpec } from '../../adapters/tools/mcp/map-tools.js';

const call = { id: 'c1', name: 'tool', arguments: {} };

describe('toToolResult', () => {
  it('prefers structuredContent as the output and keeps text otherwise', () => {
    expect(
      toToolResult(call, {
        content: [{ type: 'text', text: '{"n":1}' }],
        structuredContent: { n: 1 },
      }),
    ).toEqual({ toolCallId: 'c1', name: 'tool', output: { n: 1 }, success: true });
    expect(
      toToolResult(call, {
        content: [
          { type: 'text', text: 'one' },
          { type: 'text', text: 'two' },
        ],
      }).output,
    ).toBe('one\ntwo');
    expect(toToolResult(call, { content: [] })).toMatchObject({ output: '', success: true });
  });

  it('turns isError into a failed result, with a message even when the server gave none', () => {
    expect(
      toToolResult(call, { isError: true, content: [{ type: 'text', text: 'no such file' }] }),
    ).toEqual({
      toolCallId: 'c1',
      name: 'tool',
      output: null,
      success: false,
      error: 'no such file',
    });
    expect(toToolResult(call, { isError: true, content: [] }).error).toBe(
      "Tool 'tool' reported an error without a message.",
    );
  });

  it('attaches the media every provider reads, describes the rest, and says where each stood', () => {
    const result = toToolResult(call, {
      content: [
        { type: 'audio', data: 'AAAA', mimeType: 'audio/wav' },
        { type: 'resource', resource: { uri: 'file:///a.bin', blob: 'AAAAAA==' } },
        {
          type: 'resource',
          resource: {
            uri: 'file:///docs/report.pdf',
            mimeType: 'application/pdf',
            blob: 'JVBERg==',
          },
        },
        {
          type: 'resource_link',
          name: 'log',
          uri: 'file:///log.txt',
          mimeType: 'text/plain',
        },
      ],
    });
    expect(result.output).toBe(
      [
        '[audio audio/wav, 3 bytes, not shown]',
        '[resource file:///a.bin, 4 bytes, binary, not shown]',
        '[resource file:///docs/report.pdf (application/pdf), 4 bytes, attached]',
        '[resource link log: file:///log.txt (text/plain)]',
      ].join('\n'),
    );
    // Audio and an untyped blob: some provider would refuse them, failing every later call.
    expect(result.attachments).toEqual([
      { mediaType: 'application/pdf', data: 'JVBERg==', name: 'report.pdf' },
    ]);
  });

  it('describes media it cannot attach instead of passing base64 on, and attaches nothing on failure', () => {
    // A media type that is not one ('png') cannot be sent to a provider as such.
    const odd = toToolResult(call, { content: [{ type: 'image', data: 'AAAA', mimeType: 'png' }] });
    expect(odd.output).toBe('[image png, 3 bytes, not shown]');
    expect(odd).not.toHaveProperty('attachments');
    const failed = toToolResult(call, {
      isError: true,
      content: [
        { type: 'text', text: 'Rendering failed.' },
        { type: 'image', data: 'AAAA', mimeType: 'image/png' },
      ],
    });
    expect(failed.error).toBe('Rendering failed.\n[image image/png, 3 bytes, not shown]');
    expect(failed).not.toHaveProperty('attachments');
  });

  it('keeps a result without media free of attachments', () => {
    expect(toToolResult(call, { content: [{ type: 'text', text: 'ok' }] })).toEqual({
      toolCallId: call.id,
      name: call.name,
      output: 'ok',
      success: true,
    });
  });

  it('keeps the bare toolResult of servers on the 2024-10-07 protocol', () => {
    expect(toToolResult(call, { toolResult: { rows: 3 } })).toMatchObject({
      output: { rows: 3 },
      success: true,
    });
  });
});

describe('toToolSpec', () => {
  it('passes the input schema through unchanged', () => {
    const inputSchema = {
      type: 'object' as const,
      properties: { q: { type: 'string', minLength: 1 } },
      required: ['q'],
    };
    expect(toToolSpec({ name: 'search', description: 'Searches.', inputSchema }, 'srv')).toEqual({
      name: 'search',
      description: 'Searches.',
      inputSchema,
    });
  });

  it('falls back from description to title to annotations.title to a sentence', () => {
    const inputSchema = { type: 'object' as const };
    expect(
      toToolSpec({ name: 't', description: '  ', title: 'Title', inputSchema }, 's').description,
    ).toBe('Title');
    expect(
      toToolSpec({ name: 't', annotations: { title: 'Annotated' }, inputSchema }, 's').description,
    ).toBe('Annotated');
    expect(toToolSpec({ name: 't', inputSchema }, 's').description).toBe(
      "Tool 't' of the MCP server 's'.",
    );
  });
});

describe('providerSafeNames', () => {
  const SAFE = /^[a-zA-Z0-9_-]{1,64}$/;

  it('keeps names the providers accept, unchanged', () => {
    const names = ['search', 'get-weather', 'A_1', 'x'.repeat(64)];
    expect(providerSafeNames(names)).toEqual(names);
  });

  it('replaces other characters with _ and cuts to 64 characters', () => {
    expect(providerSafeNames(['files.read', 'a b/c:d', 'café', 'emoji😀', ''])).toEqual([
      'files_read',
      'a_b_c_d',
      'caf_',
      // One character outside the BMP becomes one _, not two.
      'emoji_',
      '_',
    ]);
    expect(providerSafeNames(['y'.repeat(70)])).toEqual(['y'.repeat(64)]);
  });

  it('never takes a listed name, wherever it is listed, and never repeats one', () => {
    const names = ['files.read', 'files_read', 'files:read', 'files_read_2'];
    const safe = providerSafeNames(names);
    expect(safe).toEqual(['files_read_3', 'files_read', 'files_read_4', 'files_read_2']);
  });

  it('keeps names it suffixes within 64 characters', () => {
    const long = 'z'.repeat(70);
    const safe = providerSafeNames([`${long}a`, `${long}b`, `${long}c`]);
    expect(safe).toEqual(['z'.repeat(64), `${'z'.repeat(62)}_2`, `${'z'.repeat(62)}_3`]);
    for (const name of safe) expect(name).toMatch(SAFE);
  });

  it('gives the same names for the same listing', () => {
    const names = ['a.b', 'a_b', 'a/b'];
    expect(providerSafeNames(names)).toEqual(providerSafeNames(names));
  });
});
