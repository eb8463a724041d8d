// The codec's `attachment` tag: an inline attachment's bytes written elsewhere (by sha256) when
// the writer asks, and found again by the reader; without the bytes, a clear refusal.
import { describe, expect, it } from 'vitest';
import { decode, encode } from '../../src/durable/codec.js';
import { JournalCodecError } from '../../src/durable/codec-error.js';
import { attachment, userMessage } from '../../src/index.js';
import { Transcript } from '../../src/transcript.js';

const image = attachment({
  data: new Uint8Array([0x89, 0x50, 0x4e, 0x47, 1, 2, 3]),
  name: 'a.png',
});
const pdf = attachment({ data: 'JVBERi0xLjQK', mediaType: 'application/pdf' });

describe('the attachment tag', () => {
  it('writes bytes through attachmentRef and reads them back through attachmentData', () => {
    const kept = new Map<string, string>();
    const value = {
      transcript: Transcript.from([userMessage('look', [image, pdf])]),
      again: [image],
      url: attachment({ url: 'https://example.com/x.png' }),
    };
    const json = JSON.parse(
      JSON.stringify(
        encode(value, {
          attachmentRef: (data) => {
            const ref = `h${kept.size}`;
            for (const [key, kept_] of kept) if (kept_ === data) return key;
            kept.set(ref, data);
            return ref;
          },
        }),
      ),
    );
    expect(JSON.stringify(json)).not.toContain(image.data);
    expect(JSON.stringify(json)).not.toContain(pdf.data);
    expect(kept.size).toBe(2);
    // A URL attachment has no bytes: written as it is.
    expect(json.url).toEqual({ mediaType: 'image/png', url: 'https://example.com/x.png' });
    expect(decode(json, { attachmentData: (sha) => kept.get(sha) })).toEqual(value);
  });

  it('writes bytes inline without attachmentRef (as before)', () => {
    const json = encode({ image });
    expect(json).toEqual({ image: { ...image } });
  });

  it('refuses a reference whose bytes are missing, naming the path', () => {
    const json = encode({ at: [image] }, { attachmentRef: () => 'abc123' });
    expect(() => decode(json)).toThrow(JournalCodecError);
    expect(() => decode(json)).toThrow(
      /\$\.at\[0\]: an attachment's bytes \(sha256 abc123…\) are not in the journal/,
    );
    expect(() => decode({ $sc: 'attachment', v: { sha256: 1 } })).toThrow(
      /malformed "attachment" tag/,
    );
  });
});
