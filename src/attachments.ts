import { InputError } from './errors.js';
import type { Attachment } from './messages.js';

// The Attachment type lives with the messages that carry it (messages.ts); this module makes
// and reads them.
export type { Attachment };

/** What `attachment()` takes: bytes, base64 text or a URL (a `data:` URL is read as bytes). */
export type AttachmentSource =
  | {
      readonly data: Uint8Array | ArrayBuffer | string;
      /** Optional for PNG, JPEG, GIF, WebP and PDF bytes: read from their first bytes. */
      readonly mediaType?: string;
      readonly name?: string;
    }
  | {
      readonly url: string | URL;
      /** Optional when the URL's path ends in a known extension (`.png`, `.pdf`…). */
      readonly mediaType?: string;
      readonly name?: string;
    };

/**
 * An attachment from bytes or a URL, checked and frozen:
 * `attachment({ data: await readFile('chart.png') })`, `attachment({ url, mediaType: 'application/pdf' })`.
 * String `data` is base64. Throws InputError when the media type is missing and cannot be
 * inferred, or when the source is neither bytes nor a URL.
 */
export function attachment(source: AttachmentSource): Attachment {
  const where = 'attachment()';
  if (typeof source !== 'object' || source === null)
    throw new InputError(`${where}: expected { data, mediaType? } or { url, mediaType? }`);
  const name = source.name;
  if (name !== undefined && typeof name !== 'string')
    throw new InputError(`${where}: name must be a string`);
  if ('url' in source && source.url !== undefined) {
    const url = String(source.url);
    const inline = parseDataUrl(url);
    if (inline) {
      return made({ mediaType: source.mediaType ?? inline.mediaType, data: inline.data, name });
    }
    const parsed = httpUrl(url);
    if (!parsed)
      throw new InputError(`${where}: url must be an http(s) or data: URL; got ${clip(url)}`);
    const mediaType = source.mediaType ?? mediaTypeOfPath(parsed.pathname);
    if (!mediaType)
      throw new InputError(
        `${where}: cannot tell the media type of ${clip(url)}; pass mediaType (e.g. 'image/png')`,
      );
    return made({ mediaType, url, name });
  }
  if ('data' in source && source.data !== undefined) {
    const data = source.data;
    if (typeof data === 'string') {
      // A data: URL given as data: read, not sent on as if it were base64.
      if (data.startsWith('data:')) return attachment({ url: data, ...rest(source) });
      if (!BASE64.test(data))
        throw new InputError(
          `${where}: data as a string must be base64 (A–Z, a–z, 0–9, +, /, = padding)`,
        );
      const mediaType =
        source.mediaType ?? sniffMediaType(bytesOfBase64(data.slice(0, SNIFF_BASE64)));
      if (!mediaType)
        throw new InputError(`${where}: cannot tell the media type of these bytes; pass mediaType`);
      return made({ mediaType, data, name });
    }
    if (!(data instanceof Uint8Array) && !(data instanceof ArrayBuffer))
      throw new InputError(`${where}: data must be a Uint8Array, an ArrayBuffer or base64 text`);
    const bytes = data instanceof Uint8Array ? data : new Uint8Array(data);
    const mediaType = source.mediaType ?? sniffMediaType(bytes);
    if (!mediaType)
      throw new InputError(`${where}: cannot tell the media type of these bytes; pass mediaType`);
    return made({ mediaType, data: base64OfBytes(bytes), name });
  }
  throw new InputError(`${where}: expected { data, mediaType? } or { url, mediaType? }`);
}

function made(fields: {
  mediaType: string;
  data?: string;
  url?: string;
  name: string | undefined;
}): Attachment {
  if (typeof fields.mediaType !== 'string' || !fields.mediaType.includes('/'))
    throw new InputError(
      `attachment(): mediaType must look like 'type/subtype'; got ${JSON.stringify(fields.mediaType)}`,
    );
  const out: { -readonly [K in keyof Attachment]: Attachment[K] } = {
    mediaType: fields.mediaType.toLowerCase(),
  };
  if (fields.data !== undefined) out.data = fields.data;
  if (fields.url !== undefined) out.url = fields.url;
  if (fields.name !== undefined) out.name = fields.name;
  return Object.freeze(out);
}

/** True for an image (`image/…`); adapters send the others as files or documents. */
export function isImage(attachment: Attachment): boolean {
  return attachment.mediaType.startsWith('image/');
}

/** The attachment as a `data:` URL, or its URL. */
export function attachmentUrl(attachment: Attachment): string {
  return attachment.url ?? `data:${attachment.mediaType};base64,${attachment.data ?? ''}`;
}

/** Size in bytes of an inline attachment (0 for a URL): what spans and viewers show. */
export function attachmentSize(attachment: Attachment): number {
  const data = attachment.data;
  if (!data) return 0;
  const padding = data.endsWith('==') ? 2 : data.endsWith('=') ? 1 : 0;
  return Math.floor((data.length * 3) / 4) - padding;
}

/**
 * A problem with a value that should be an attachment, or undefined: for inputs that arrive
 * as plain JSON (a run's messages, a journal, a remote tool's result).
 */
export function attachmentProblem(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return 'is not an object { mediaType, data | url, name? }';
  const { mediaType, data, url, name } = value as Record<string, unknown>;
  if (typeof mediaType !== 'string' || !mediaType.includes('/'))
    return "has no mediaType like 'image/png'";
  if (mediaType !== mediaType.toLowerCase()) return 'has a mediaType that is not lower-case';
  if ((data === undefined) === (url === undefined))
    return 'must have exactly one of data (base64) and url';
  if (data !== undefined && (typeof data !== 'string' || !BASE64.test(data)))
    return 'has data that is not base64 text';
  // Only http(s): a javascript: or file: URL must reach neither a page nor a provider.
  if (url !== undefined && (typeof url !== 'string' || !httpUrl(url)))
    return 'has a url that is not an http(s) URL';
  if (name !== undefined && typeof name !== 'string') return 'has a name that is not a string';
  return undefined;
}

/** The URL if it is a well-formed http(s) URL, else undefined (never throws). */
function httpUrl(url: string): URL | undefined {
  if (!/^https?:\/\//i.test(url)) return undefined;
  try {
    return new URL(url);
  } catch {
    return undefined;
  }
}

function rest(source: { readonly mediaType?: string; readonly name?: string }) {
  return {
    ...(source.mediaType !== undefined && { mediaType: source.mediaType }),
    ...(source.name !== undefined && { name: source.name }),
  };
}

// Standard base64, padded or not; one character class and an anchored tail: linear.
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

// --- bytes, base64 and media types ----------------------------------------------------------

// 16 base64 characters are 12 bytes: enough for every signature below.
const SNIFF_BASE64 = 16;

/** The media type of bytes by their signature, for the formats models read most. */
export function sniffMediaType(bytes: Uint8Array): string | undefined {
  const starts = (...signature: number[]) => signature.every((byte, i) => bytes[i] === byte);
  if (starts(0x89, 0x50, 0x4e, 0x47)) return 'image/png';
  if (starts(0xff, 0xd8, 0xff)) return 'image/jpeg';
  if (starts(0x47, 0x49, 0x46, 0x38)) return 'image/gif';
  if (starts(0x25, 0x50, 0x44, 0x46)) return 'application/pdf';
  // RIFF....WEBP
  if (
    starts(0x52, 0x49, 0x46, 0x46) &&
    [0x57, 0x45, 0x42, 0x50].every((b, i) => bytes[8 + i] === b)
  )
    return 'image/webp';
  return undefined;
}

const EXTENSIONS: Readonly<Record<string, string>> = {
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  webp: 'image/webp',
  pdf: 'application/pdf',
  txt: 'text/plain',
  md: 'text/markdown',
  csv: 'text/csv',
  json: 'application/json',
  html: 'text/html',
  mp3: 'audio/mpeg',
  wav: 'audio/wav',
};

function mediaTypeOfPath(path: string): string | undefined {
  const dot = path.lastIndexOf('.');
  return dot < 0 ? undefined : EXTENSIONS[path.slice(dot + 1).toLowerCase()];
}

/** `{ mediaType, data }` of a base64 `data:` URL, or undefined (indexOf, not a regex: linear). */
function parseDataUrl(url: string): { mediaType: string; data: string } | undefined {
  if (!url.startsWith('data:')) return undefined;
  const comma = url.indexOf(',');
  if (comma < 0) return undefined;
  const header = url.slice(5, comma);
  if (!header.endsWith(';base64'))
    throw new InputError('attachment(): a data: URL must be base64-encoded (";base64,")');
  return {
    mediaType: header.slice(0, -';base64'.length).split(';')[0] ?? '',
    data: url.slice(comma + 1),
  };
}

/** Base64 of bytes: Buffer where there is one (Node), btoa elsewhere. */
export function base64OfBytes(bytes: Uint8Array): string {
  const buffer = (globalThis as { Buffer?: typeof Buffer }).Buffer;
  if (buffer)
    return buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64');
  let binary = '';
  // Chunked: String.fromCharCode with a whole image as arguments overflows the stack.
  for (let i = 0; i < bytes.length; i += 0x8000)
    binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(binary);
}

/** The bytes of base64 text. */
export function bytesOfBase64(base64: string): Uint8Array {
  const buffer = (globalThis as { Buffer?: typeof Buffer }).Buffer;
  if (buffer) return new Uint8Array(buffer.from(base64, 'base64'));
  const binary = atob(base64);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

function clip(text: string): string {
  return JSON.stringify(text.length > 60 ? `${text.slice(0, 60)}…` : text);
}

/**
 * The text that opens a tool result's attachments where a provider cannot put them inside the
 * result (OpenAI Chat's tool messages, Gemini before 3): which call they came from.
 */
export function toolAttachmentsLabel(
  result: { readonly name: string; readonly toolCallId: string },
  count: number,
): string {
  return `Attachments returned by the tool call ${result.name} (id ${result.toolCallId}), ${count} ${count === 1 ? 'item' : 'items'}:`;
}
