import type OpenAI from 'openai';
import { type Attachment, attachmentUrl, isImage } from '../../../src/attachments.js';
import { InputError } from '../../../src/errors.js';

// Attachments as OpenAI content parts, for Chat Completions and for the Responses API. What an
// API cannot take is an InputError raised while the request is mapped, before any HTTP call:
// the run's input holds something this provider cannot be sent, no retry can change that
// (withRetry does not retry an InputError), and the message says what to send instead.

type ChatPart = OpenAI.Chat.ChatCompletionContentPart;
type ResponsesPart = OpenAI.Responses.ResponseInputContent;

/** Chat Completions' two audio formats, by media type. */
const CHAT_AUDIO_FORMATS: Readonly<Record<string, 'wav' | 'mp3'>> = {
  'audio/wav': 'wav',
  'audio/x-wav': 'wav',
  'audio/wave': 'wav',
  'audio/mpeg': 'mp3',
  'audio/mp3': 'mp3',
};

/**
 * An attachment as a Chat Completions user content part: an image as `image_url` (its URL or a
 * `data:` URL), a PDF's bytes as `file` (`file_data` + `filename`), WAV or MP3 bytes as
 * `input_audio`. Chat Completions takes no file or audio by URL and no other file type.
 */
export function chatAttachmentPart(attachment: Attachment, where: string): ChatPart {
  if (isImage(attachment))
    return { type: 'image_url', image_url: { url: attachmentUrl(attachment) } };
  const { mediaType, data } = attachment;
  const format = CHAT_AUDIO_FORMATS[mediaType];
  if (mediaType === 'application/pdf' || format) {
    if (data === undefined)
      throw new InputError(
        `${where}: OpenAI Chat Completions cannot take ${mediaType} files by URL (${attachment.url}); only images may be URLs. Download it and pass its bytes (attachment({ data, mediaType: '${mediaType}' })), or use OpenAIResponsesModel, which takes file URLs.`,
      );
    if (format) return { type: 'input_audio', input_audio: { data, format } };
    return {
      type: 'file',
      file: { file_data: attachmentUrl(attachment), filename: fileName(attachment) },
    };
  }
  throw new InputError(
    `${where}: OpenAI Chat Completions cannot take ${mediaType} attachments; it takes images, PDFs and WAV or MP3 audio. Put text files in the message text, or use OpenAIResponsesModel, which takes other file types.`,
  );
}

/**
 * An attachment as a Responses API content part (in a user message or a function call's
 * output): an image as `input_image`, any other file as `input_file` (bytes as a `data:` URL in
 * `file_data` with a `filename`, or `file_url`). The Responses API takes no audio input.
 */
export function responsesAttachmentPart(attachment: Attachment, where: string): ResponsesPart {
  if (isImage(attachment))
    return { type: 'input_image', image_url: attachmentUrl(attachment), detail: 'auto' };
  if (attachment.mediaType.startsWith('audio/'))
    throw new InputError(
      `${where}: the OpenAI Responses API cannot take audio (${attachment.mediaType}). Use OpenAIChatModel with an audio-capable model (it takes WAV and MP3 bytes), or send a transcript as text.`,
    );
  if (attachment.url !== undefined) return { type: 'input_file', file_url: attachment.url };
  return {
    type: 'input_file',
    file_data: attachmentUrl(attachment),
    filename: fileName(attachment),
  };
}

/** The attachment's name, or one made from its media type (OpenAI wants a name with file bytes). */
export function fileName(attachment: Attachment): string {
  if (attachment.name) return attachment.name;
  const subtype = attachment.mediaType.split('/')[1]?.split(/[+;]/)[0] || 'bin';
  return `attachment.${subtype === 'plain' ? 'txt' : subtype}`;
}
