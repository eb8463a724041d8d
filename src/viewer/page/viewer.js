// statecraft run viewer: plain DOM, no framework. Run events arrive as Server-Sent Events
// (see src/viewer/viewer-events.ts); this script keeps a small model of each run and draws
// the selected one: its machine (Mermaid, with visited and current states marked by CSS
// classes on the SVG nodes whose ids the server names), its calls on a time axis, its figures.
// `mermaid` is the global that /mermaid.min.js, loaded before this script, defines.

const runs = new Map(); // runId → run model, in start order
const diagrams = new Map(); // diagramId → { plain, labelled } Mermaid texts
const roots = []; // runs with no known parent, in start order
let selectedId;
let drawnDiagram; // { runId, nodes: Map<nodeId, Element[]> }: the SVG on screen
let renderQueued = false;
let diagramCount = 0;

const $ = (id) => document.getElementById(id);
const follow = $('follow');
const labels = $('labels');
labels.addEventListener('change', () => {
  drawnDiagram = undefined; // draw the selected run again, with or without labels
  render();
});

mermaid.initialize({
  startOnLoad: false,
  securityLevel: 'strict',
  theme: 'base',
  themeVariables: {
    primaryColor: '#f8fafc',
    primaryBorderColor: '#94a3b8',
    lineColor: '#94a3b8',
    fontSize: '13px',
  },
});

const source = new EventSource('/events');
source.onopen = () => setConnection('live', 'live');
source.onerror = () => setConnection('lost', 'reconnecting…');
source.onmessage = (message) => {
  apply(JSON.parse(message.data));
  scheduleRender();
};

function setConnection(state, text) {
  const element = $('connection');
  element.dataset.state = state;
  element.textContent = text;
}

/** Folds one event into the run models. */
function apply(event) {
  if (event.type === 'reset') {
    // The viewer was restarted: what this page shows is from the old process. What the new
    // one keeps follows.
    runs.clear();
    diagrams.clear();
    roots.length = 0;
    selectedId = undefined;
    drawnDiagram = undefined;
    return;
  }
  if (event.type === 'diagram') {
    diagrams.set(event.diagramId, { plain: event.plain, labelled: event.labelled });
    return;
  }
  if (event.type === 'run-start') {
    const run = {
      ...event,
      status: 'running',
      children: [],
      states: [],
      current: [],
      visited: new Set(),
      modelCalls: new Map(),
      toolCalls: new Map(),
    };
    runs.set(run.runId, run);
    const parent = runs.get(run.parentRunId);
    if (parent) parent.children.push(run);
    else roots.push(run);
    if (follow.checked && (run.diagramId || !selectedId)) selectedId = run.runId;
    return;
  }
  const run = runs.get(event.runId);
  if (!run) return; // a run the server no longer keeps
  switch (event.type) {
    case 'state':
      if (run.states.at(-1) !== event.value) run.states.push(event.value);
      run.current = event.nodeIds;
      for (const id of event.nodeIds) run.visited.add(id);
      return;
    case 'model-call-start':
      run.modelCalls.set(event.index, { ...event });
      return;
    case 'model-call-end':
      Object.assign(run.modelCalls.get(event.index) ?? {}, event);
      return;
    case 'tool-call-start':
      run.toolCalls.set(event.key, { ...event });
      return;
    case 'tool-call-end':
      Object.assign(run.toolCalls.get(event.key) ?? {}, event);
      return;
    case 'run-end':
      run.status = event.status;
      run.endTime = event.endTime;
      run.error = event.error;
      if (event.usage) run.usage = event.usage;
      return;
  }
}

/** Draws at most once a frame, however many events a replay brings at once. */
function scheduleRender() {
  if (renderQueued) return;
  renderQueued = true;
  requestAnimationFrame(() => {
    renderQueued = false;
    render();
  });
}

function render() {
  $('no-runs').hidden = runs.size > 0;
  renderRunTree();
  const run = runs.get(selectedId);
  $('run').hidden = !run;
  if (!run) return;
  renderHead(run);
  renderDiagram(run);
  renderTimeline(run);
  renderStates(run);
  renderAttachments(run);
}

// Open calls grow while their run is on screen.
setInterval(() => {
  if (runs.get(selectedId)?.status === 'running') scheduleRender();
}, 250);

function renderRunTree() {
  const list = $('runs');
  list.replaceChildren(...roots.map(runItem));
}

function runItem(run) {
  const item = document.createElement('li');
  const button = el('button', 'run-item');
  button.dataset.runId = run.runId;
  button.setAttribute('aria-current', String(run.runId === selectedId));
  const dot = el('span', 'dot');
  dot.dataset.status = run.status;
  button.append(
    dot,
    el('span', 'kind', run.kind),
    el('span', 'name', run.name),
    el('span', 'time', formatMs(durationOf(run))),
  );
  button.addEventListener('click', () => {
    follow.checked = false;
    selectedId = run.runId;
    render();
  });
  item.append(button);
  if (run.children.length) {
    const children = document.createElement('ul');
    children.append(...run.children.map(runItem));
    item.append(children);
  }
  return item;
}

function renderHead(run) {
  $('run-name').textContent = run.name;
  $('run-kind').textContent = run.kind;
  $('run-model').textContent = run.model ? `${run.model.provider} · ${run.model.modelId}` : '';
  const status = $('run-status');
  status.dataset.status = run.status;
  status.textContent = run.status;
  status.title = run.error ?? '';
  // A run's figures include the runs inside it: a sequence spends what its chains spend.
  const models = callsIn(run, 'modelCalls');
  const tools = callsIn(run, 'toolCalls');
  const usage = run.usage ?? sumUsage(models);
  const figures = [
    ['duration', formatMs(durationOf(run))],
    ['model calls', String(models.length)],
    ['tool calls', `${tools.length}${countFailed(tools)}`],
    ['tokens in', formatCount(usage.inputTokens)],
    ['tokens out', formatCount(usage.outputTokens)],
    ['tokens total', formatCount(usage.totalTokens)],
  ];
  $('run-figures').replaceChildren(
    ...figures.map(([name, value]) => {
      const figure = document.createElement('div');
      figure.dataset.figure = name;
      figure.append(el('dt', '', name), el('dd', '', value));
      return figure;
    }),
  );
}

function callsIn(run, which) {
  return [...run[which].values(), ...run.children.flatMap((child) => callsIn(child, which))];
}

function countFailed(tools) {
  const failed = tools.filter((call) => call.ok === false).length;
  return failed ? ` (${failed} failed)` : '';
}

/** Renders the run's diagram when another run (or none) is on screen, then marks its states. */
function renderDiagram(run) {
  const container = $('diagram');
  if (drawnDiagram?.runId === run.runId) return markStates(run);
  const diagram = diagrams.get(run.diagramId);
  const text = diagram && (labels.checked ? diagram.labelled : diagram.plain);
  drawnDiagram = { runId: run.runId, nodes: new Map() };
  container.classList.toggle('labelled', labels.checked);
  $('machine-panel').hidden = !text;
  if (!text) {
    container.replaceChildren();
    container.dataset.rendered = 'none';
    return;
  }
  const drawing = drawnDiagram;
  const svgId = `machine-${++diagramCount}`;
  container.dataset.rendered = 'pending';
  mermaid.render(svgId, text).then(
    ({ svg }) => {
      if (drawnDiagram !== drawing) return; // another run was selected meanwhile
      container.innerHTML = svg; // Mermaid's output, sanitized under securityLevel 'strict'
      drawing.nodes = stateNodes(container, svgId);
      container.dataset.rendered = 'true';
      markStates(runs.get(drawing.runId));
    },
    (error) => {
      if (drawnDiagram !== drawing) return;
      container.replaceChildren(el('p', 'diagram-note', `Mermaid could not draw it: ${error}`));
      container.dataset.rendered = 'error';
    },
  );
}

/**
 * The SVG nodes of each state, by the Mermaid node id the server names. Mermaid gives a state
 * node the element id `<svg id>-state-<node id>-<n>`, and a compound state's cluster the same.
 */
function stateNodes(container, svgId) {
  const prefix = `${svgId}-state-`;
  const nodes = new Map();
  for (const element of container.querySelectorAll(`g[id^="${prefix}"]`)) {
    const nodeId = element.id.slice(prefix.length).replace(/-\d+$/, '');
    element.dataset.stateId = nodeId;
    nodes.set(nodeId, [...(nodes.get(nodeId) ?? []), element]);
  }
  return nodes;
}

function markStates(run) {
  if (!run || drawnDiagram?.runId !== run.runId) return;
  const current = new Set(run.current);
  for (const [nodeId, elements] of drawnDiagram.nodes) {
    for (const element of elements) {
      // A compound state is a box around its states: it is outlined while the run is inside.
      const cluster = element.classList.contains('statediagram-cluster');
      element.classList.toggle('sc-active', cluster && current.has(nodeId));
      element.classList.toggle('sc-visited', !cluster && run.visited.has(nodeId));
      element.classList.toggle('sc-current', !cluster && current.has(nodeId));
    }
  }
}

/**
 * The run's calls on a time axis, with the runs inside it (a sequence's steps, a tool loop's
 * responder) as rows of their own, each followed by its calls, indented by depth.
 */
function renderTimeline(run) {
  const now = performance.timeOrigin + performance.now();
  const start = run.startTime;
  const rows = timelineEntries(run, 0);
  const span = Math.max(
    (run.endTime ?? now) - start,
    ...rows.map((r) => (r.endTime ?? now) - start),
    1,
  );
  const timeline = $('timeline');
  if (!rows.length) {
    timeline.replaceChildren(el('p', 'muted', 'No model or tool calls yet.'));
    return;
  }
  const axis = el('div', 'axis');
  for (const fraction of [0, 0.25, 0.5, 0.75, 1]) {
    const tick = el('span', '', formatMs(span * fraction));
    tick.style.left = `${fraction * 100}%`;
    axis.append(tick);
  }
  const cells = rows.flatMap((row) => timelineRow(row, start, span, now));
  timeline.replaceChildren(el('div', '', ''), axis, ...cells);
}

function timelineEntries(run, depth) {
  const entries = [
    ...[...run.modelCalls.values()].map((call) => ({ ...call, kind: 'model', depth })),
    ...[...run.toolCalls.values()].map((call) => ({ ...call, kind: 'tool', depth })),
    ...run.children.map((child) => ({ ...child, kind: 'run', depth, run: child })),
  ].sort((a, b) => a.startTime - b.startTime);
  return entries.flatMap((entry) =>
    entry.kind === 'run' ? [entry, ...timelineEntries(entry.run, depth + 1)] : [entry],
  );
}

function timelineRow(row, start, span, now) {
  const open = row.endTime === undefined;
  const failed =
    row.kind === 'model'
      ? row.error !== undefined
      : row.kind === 'tool'
        ? row.ok === false
        : row.status === 'failed';
  const classes = ['row', row.kind, failed && 'error', open && 'open'].filter(Boolean).join(' ');
  const label = el('div', `row-label ${classes}`);
  label.style.paddingLeft = `${row.depth * 14}px`;
  const track = el('div', `track ${classes}`);
  if (row.kind === 'model') {
    label.append(`#${row.index} ${row.purpose} `);
    if (row.usage) {
      label.append(
        el('span', 'tokens', `${row.usage.inputTokens} → ${row.usage.outputTokens} tok`),
      );
    }
    label.title = row.error ?? `${row.model.provider} · ${row.model.modelId}`;
  } else if (row.kind === 'tool') {
    label.append(`${row.name} `);
    if (!open) label.append(el('span', failed ? 'failed' : 'ok', failed ? '✗' : '✓'));
    if (row.attachments?.length)
      label.append(el('span', 'attached', ` +${row.attachments.length}`));
    label.title = `${row.name}(${row.arguments}) → ${row.preview ?? '…'}`;
  } else {
    label.append(el('span', 'kind', row.run.kind), ` ${row.name}`);
    label.title = row.run.error ?? row.name;
  }
  const endTime = row.endTime ?? now;
  const left = ((row.startTime - start) / span) * 100;
  const width = (Math.max(endTime - row.startTime, 0) / span) * 100;
  const bar = el('div', 'bar-span');
  bar.style.left = `${left}%`;
  bar.style.width = `${width}%`;
  const latency = el('span', 'latency', formatMs(Math.max(endTime - row.startTime, 0)));
  // The latency goes after the bar, or inside it when the bar reaches the right edge.
  latency.classList.add(left + width > 80 ? 'inside' : 'after');
  bar.append(latency);
  bar.title = label.title;
  track.append(bar);
  return [label, track];
}

/** The run's input attachments, then each tool call's, the runs inside it included. */
function renderAttachments(run) {
  const items = attachmentsIn(run);
  $('attachments-panel').hidden = items.length === 0;
  $('attachments').replaceChildren(...items.map(attachmentItem));
}

function attachmentsIn(run) {
  const own = (run.attachments ?? []).map((attachment) => ({ from: 'input', attachment }));
  const tools = [...run.toolCalls.values()].flatMap((call) =>
    (call.attachments ?? []).map((attachment) => ({ from: call.name, attachment })),
  );
  return [...own, ...tools, ...run.children.flatMap(attachmentsIn)];
}

/**
 * One attachment: a thumbnail when the server sent one (a small inline image, as a data:
 * URL), else its type; a URL attachment is shown as text, never fetched.
 */
function attachmentItem({ from, attachment }) {
  const item = el('li', 'attachment');
  item.dataset.mediaType = attachment.mediaType;
  if (attachment.thumbnail) {
    const image = document.createElement('img');
    image.className = 'thumb';
    image.alt = attachment.name ?? attachment.mediaType;
    image.src = attachment.thumbnail;
    item.append(image);
  } else {
    item.append(el('span', 'file-icon', attachment.mediaType.split('/')[1] ?? 'file'));
  }
  const size = attachment.url ?? formatBytes(attachment.size);
  const caption = [attachment.name, attachment.mediaType, size].filter(Boolean).join(' · ');
  item.append(el('span', 'from', from), el('span', 'caption', caption));
  item.title = caption;
  return item;
}

function formatBytes(bytes) {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
}

function renderStates(run) {
  $('states').replaceChildren(...run.states.map((value) => el('li', '', stateLabel(value))));
}

/** `{"running":"planning"}` reads as `running.planning`. */
function stateLabel(value) {
  if (!value.startsWith('{')) return value;
  try {
    return flatten(JSON.parse(value)).join(', ');
  } catch {
    return value;
  }
}

function flatten(value) {
  if (typeof value === 'string') return [value];
  return Object.entries(value).flatMap(([key, child]) =>
    flatten(child).map((inner) => `${key}.${inner}`),
  );
}

function sumUsage(calls) {
  const sum = { inputTokens: 0, outputTokens: 0, totalTokens: 0 };
  for (const { usage } of calls) {
    if (!usage) continue;
    sum.inputTokens += usage.inputTokens;
    sum.outputTokens += usage.outputTokens;
    sum.totalTokens += usage.totalTokens;
  }
  return sum;
}

function durationOf(run) {
  // The page's clock and the runs' process clock are both wall-clock based; never below 0.
  return Math.max((run.endTime ?? performance.timeOrigin + performance.now()) - run.startTime, 0);
}

function formatMs(ms) {
  if (ms < 1) return `${ms.toFixed(1)} ms`;
  if (ms < 1000) return `${Math.round(ms)} ms`;
  return `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;
}

function formatCount(count) {
  return count.toLocaleString('en-US');
}

function el(tag, className, text) {
  const element = document.createElement(tag);
  if (className) element.className = className;
  if (text !== undefined) element.textContent = text;
  return element;
}

render();
