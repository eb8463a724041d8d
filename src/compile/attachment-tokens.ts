import { type Attachment, attachmentSize, bytesOfBase64, isImage } from '../attachments.js';

/**
 * What an image costs a model, in tokens, for the budget estimate: 1,600, the most Anthropic
 * bills for one image (about 1.15 megapixels, larger ones are scaled down to it) and about
 * what OpenAI bills a high-detail image of that size. The estimate does not decode images to
 * read their dimensions, so every image counts as a large one: a budget errs on the side of
 * stopping early rather than late.
 */
export const IMAGE_TOKENS = 1600;

/**
 * The characters an attachment counts as in the budget estimate (which reckons four
 * characters a token). Never its base64's length, which would count an image as thousands of
 * tokens it does not cost, nor a PDF's bytes, which are mostly compressed streams:
 * - an image: IMAGE_TOKENS' worth;
 * - a PDF: IMAGE_TOKENS' worth per page (providers read each page as an image and its text);
 * - a text file (text/*, JSON, XML): its size, about that many characters;
 * - anything else, or a file given by URL whose size the run does not know: IMAGE_TOKENS' worth.
 */
export function attachmentChars(attachments: readonly Attachment[] | undefined): number {
  let chars = 0;
  for (const attachment of attachments ?? []) {
    if (attachment.data !== undefined && isText(attachment.mediaType))
      chars += attachmentSize(attachment);
    else if (attachment.data !== undefined && attachment.mediaType === 'application/pdf')
      chars += pdfPages(attachment) * IMAGE_TOKENS * 4;
    else chars += IMAGE_TOKENS * 4;
  }
  return chars;
}

function isText(mediaType: string): boolean {
  return (
    !isImage({ mediaType }) &&
    (mediaType.startsWith('text/') ||
      mediaType === 'application/json' ||
      mediaType.endsWith('+json') ||
      mediaType.endsWith('/xml') ||
      mediaType.endsWith('+xml'))
  );
}

// The estimate runs before every model call; a PDF's pages are counted once.
const pageCounts = new WeakMap<Attachment, number>();

/** A PDF's page objects (`/Type /Page`, not `/Pages`), at least 1: read once per attachment. */
function pdfPages(attachment: Attachment): number {
  const known = pageCounts.get(attachment);
  if (known !== undefined) return known;
  const text = new TextDecoder('latin1').decode(bytesOfBase64(attachment.data ?? ''));
  // One literal, a whitespace run and a one-character lookahead: linear in the file's size.
  const pages = Math.max(1, text.match(/\/Type\s*\/Page(?!s)/g)?.length ?? 0);
  pageCounts.set(attachment, pages);
  return pages;
}
