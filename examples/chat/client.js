// The page's script: the AI SDK's own chat client, with a ten-line state that redraws the
// page on every change. Bundled by examples/chat-server.ts when it starts.
import {
  AbstractChat,
  DefaultChatTransport,
  lastAssistantMessageIsCompleteWithApprovalResponses,
} from 'ai';

/** The chat's state (what `Chat` of @ai-sdk/react keeps in React state), redrawn on change. */
class PageState {
  #status = 'ready';
  #error = undefined;
  #messages = [];
  get messages() {
    return this.#messages;
  }
  set messages(messages) {
    this.#messages = messages;
    render();
  }
  get status() {
    return this.#status;
  }
  set status(status) {
    this.#status = status;
    render();
  }
  get error() {
    return this.#error;
  }
  set error(error) {
    this.#error = error;
    render();
  }
  pushMessage(message) {
    this.messages = [...this.messages, message];
    render();
  }
  popMessage() {
    this.messages = this.messages.slice(0, -1);
    render();
  }
  replaceMessage(index, message) {
    this.messages = this.messages.map((m, i) => (i === index ? message : m));
    render();
  }
  snapshot(value) {
    return structuredClone(value);
  }
}

let started = false;

class PageChat extends AbstractChat {
  constructor(init) {
    super({ ...init, state: new PageState() });
  }
}

const chat = new PageChat({
  transport: new DefaultChatTransport({ api: '/api/chat' }),
  // Once every approval in the answer is decided, the client posts the conversation again.
  sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses,
  onError: () => render(),
});
started = true;

const el = (tag, attrs = {}, ...children) => {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (key.startsWith('on')) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value);
  }
  node.append(...children.filter((c) => c !== undefined && c !== null));
  return node;
};

function toolPart(part) {
  const name = part.type === 'dynamic-tool' ? part.toolName : part.type.slice('tool-'.length);
  const box = el(
    'div',
    { class: 'tool', 'data-tool': name, 'data-state': part.state },
    el('span', { class: 'state' }, part.state),
    el(
      'div',
      {},
      'Tool ',
      el('b', {}, name),
      ' ',
      el('code', {}, JSON.stringify(part.input ?? {})),
    ),
  );
  if (part.state === 'approval-requested') {
    const answer = (approved) => () =>
      chat.addToolApprovalResponse({
        id: part.approval.id,
        approved,
        ...(approved ? {} : { reason: 'denied in the browser' }),
      });
    box.append(
      el('div', {}, 'This call needs your approval.'),
      el('button', { class: 'approve', onclick: answer(true) }, 'Approve'),
      el('button', { class: 'deny', onclick: answer(false) }, 'Deny'),
    );
  }
  if (part.approval?.approved === true)
    box.append(el('div', { class: 'approved' }, '✓ approved in the browser'));
  if (part.state === 'output-available')
    box.append(el('div', {}, 'Result ', el('code', {}, JSON.stringify(part.output))));
  if (part.state === 'output-error') box.append(el('div', { class: 'error' }, part.errorText));
  if (part.state === 'output-denied')
    box.append(
      el(
        'div',
        { class: 'error' },
        `Denied${part.approval?.reason ? `: ${part.approval.reason}` : ''}`,
      ),
    );
  return box;
}

/**
 * The URL a file part may be linked or shown from: http(s) or data: only. A file's URL comes
 * from a tool, and a `javascript:` one in a link would run script in this page, the one that
 * holds the Approve buttons.
 */
function safeUrl(url) {
  try {
    const { protocol } = new URL(url, location.href);
    return protocol === 'http:' || protocol === 'https:' || protocol === 'data:' ? url : undefined;
  } catch {
    return undefined;
  }
}

function partView(part) {
  if (part.type === 'text') return el('div', { class: 'text' }, part.text);
  if (part.type === 'file') {
    const url = safeUrl(part.url);
    const label = part.filename ?? part.mediaType;
    return el(
      'div',
      { class: 'file' },
      url === undefined
        ? el('span', {}, label)
        : part.mediaType.startsWith('image/')
          ? el('img', { src: url, alt: part.filename ?? '' })
          : el('a', { href: url }, label),
    );
  }
  if (part.type === 'dynamic-tool' || part.type.startsWith('tool-')) return toolPart(part);
  return null; // step boundaries, the data-result part
}

function render() {
  if (!started) return; // the state's first values, set while the chat is made
  const list = document.getElementById('messages');
  list.replaceChildren(
    ...chat.messages.map((message) =>
      el(
        'div',
        { class: `message ${message.role}`, 'data-role': message.role },
        el('div', { class: 'role' }, message.role),
        ...message.parts.map(partView),
      ),
    ),
  );
  const status = document.getElementById('status');
  status.dataset.status = chat.status;
  status.textContent = chat.error ? `error: ${chat.error.message}` : chat.status;
}

document.getElementById('send').addEventListener('submit', (event) => {
  event.preventDefault();
  const input = document.getElementById('input');
  const text = input.value.trim();
  if (text === '') return;
  input.value = '';
  chat.sendMessage({ text });
});
render();
