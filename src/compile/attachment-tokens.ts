import { type Attachment, attachmentSize, isImage } from '../attachments.js';

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
 * characters a token): an image IMAGE_TOKENS' worth; another file its size in bytes (a text
 * or CSV file is about that many characters, and a PDF's text rarely more than its bytes),
 * or IMAGE_TOKENS' worth when it is a URL whose size the run does not know. Never its base64's
 * length, which would count an image as thousands of tokens it does not cost.
 */
export function attachmentChars(attachments: readonly Attachment[] | undefined): number {
  let chars = 0;
  for (const attachment of attachments ?? []) {
    if (isImage(attachment) || attachment.data === undefined) chars += IMAGE_TOKENS * 4;
    else chars += attachmentSize(attachment);
  }
  return chars;
}
