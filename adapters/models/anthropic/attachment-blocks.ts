import type { DocumentBlockParam, ImageBlockParam } from '@anthropic-ai/sdk/resources/messages';
import { type Attachment, bytesOfBase64, isImage } from '../../../src/attachments.js';
import { InputError } from '../../../src/errors.js';

// Attachments as Messages API content blocks: `image` and `document`, in user messages and
// inside `tool_result` content. What the API cannot take is an InputError raised while the
// request is mapped, before any HTTP call (no retry can change it; the message says what to do).

/** The image types the Messages API reads. */
const IMAGE_TYPES = new Set(['image/jpeg', 'image/png', 'image/gif', 'image/webp']);

type ImageMediaType = 'image/jpeg' | 'image/png' | 'image/gif' | 'image/webp';

/**
 * An attachment as a block: an image (base64 or URL source), a PDF as a `document` (base64 or
 * URL source), and text (`text/*`, JSON) as a plain-text `document` whose `title` is the
 * attachment's name. Anything else (audio, other files, a text file by URL) is an InputError.
 */
export function attachmentBlock(
  attachment: Attachment,
  where: string,
): ImageBlockParam | DocumentBlockParam {
  const { mediaType, data, url } = attachment;
  const title = attachment.name !== undefined ? { title: attachment.name } : {};
  if (isImage(attachment)) {
    if (!IMAGE_TYPES.has(mediaType))
      throw new InputError(
        `${where}: Anthropic cannot take ${mediaType} images; it reads JPEG, PNG, GIF and WebP. Convert the image to PNG or JPEG first.`,
      );
    return {
      type: 'image',
      source:
        url !== undefined
          ? { type: 'url', url }
          : { type: 'base64', media_type: mediaType as ImageMediaType, data: data ?? '' },
    };
  }
  if (mediaType === 'application/pdf') {
    return {
      type: 'document',
      source:
        url !== undefined
          ? { type: 'url', url }
          : { type: 'base64', media_type: 'application/pdf', data: data ?? '' },
      ...title,
    };
  }
  if (isText(mediaType)) {
    if (data === undefined)
      throw new InputError(
        `${where}: Anthropic cannot take ${mediaType} files by URL (${url}); only images and PDFs may be URLs. Download it and pass its bytes (attachment({ data, mediaType: '${mediaType}' })).`,
      );
    return {
      type: 'document',
      source: {
        type: 'text',
        media_type: 'text/plain',
        data: new TextDecoder().decode(bytesOfBase64(data)),
      },
      ...title,
    };
  }
  throw new InputError(
    `${where}: Anthropic cannot take ${mediaType} attachments; it takes JPEG, PNG, GIF and WebP images, PDFs and text files. Convert it, or describe it in text.`,
  );
}

/** Text the API can read as a plain-text document. */
function isText(mediaType: string): boolean {
  return (
    mediaType.startsWith('text/') ||
    mediaType === 'application/json' ||
    mediaType === 'application/xml'
  );
}
