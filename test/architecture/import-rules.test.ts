// The import rules of docs/architecture.md, checked on the real source: the compiler lists
// every import of every file under src/, machines/ and adapters/ (type-only and dynamic ones
// included), and each rule below reads that graph. A failure names the file, what it imports
// and the rule it breaks.
import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { type ImportGraph, readImportGraph } from './import-graph.js';
import { aboveMachines, entryFiles, folderNode, folderOf, pureCore } from './layers.js';

const root = '.';

/**
 * Circles that remain, each with why. None remain: the lists stay so that a circle a change
 * cannot avoid is written down with its reason, and they may only shrink: a circle not listed
 * fails the test, and so does an entry whose circle is gone or smaller (update or remove it).
 */
const allowedFileCircles: readonly Allowed[] = [];

const allowedFolderCircles: readonly Allowed[] = [];

/**
 * The imports from a folder to one listed after it in docs/architecture.md that close the
 * listed folder circles. Like the circles, this list may only shrink.
 */
const allowedUpwardImports: readonly { readonly from: string; readonly to: string }[] = [];

interface Allowed {
  readonly members: readonly string[];
  readonly why: string;
}

/** What a found set of circles breaks against an allow-list: unlisted circles and stale entries. */
function againstAllowList(
  found: readonly (readonly string[])[],
  allowedList: readonly Allowed[],
  explain: (members: readonly string[]) => string,
): string[] {
  const key = (members: readonly string[]) => [...members].sort().join(', ');
  const allowed = new Set(allowedList.map((entry) => key(entry.members)));
  const contains = (outer: readonly string[], inner: readonly string[]) =>
    inner.every((member) => outer.includes(member));
  const unlisted = found
    .filter((members) => !allowed.has(key(members)))
    .map((members) => {
      const within = allowedList.find((entry) => contains(entry.members, members));
      if (within !== undefined) {
        return `the listed circle [${key(within.members)}] shrank to [${key(members)}]: update its entry`;
      }
      const taken = allowedList.filter((entry) => contains(members, entry.members));
      const grew = taken.map(
        (entry) => ` (it takes in the listed [${key(entry.members)}], which may only shrink)`,
      );
      return explain(members) + grew.join('');
    });
  const gone = allowedList
    .map((entry) => entry.members)
    .filter((members) => !found.some((part) => contains(part, members) || contains(members, part)))
    .map((members) => `[${key(members)}] is no longer a circle: remove its entry`);
  return [...unlisted, ...gone];
}

let graph: ImportGraph;
let entries: ReadonlySet<string>;

beforeAll(() => {
  graph = readImportGraph(root);
  entries = entryFiles(root);
}, 120_000);

/** Every import edge between two files of the graph (packages left out). */
function fileEdges(): { from: string; to: string }[] {
  return graph.files.flatMap((from) =>
    (graph.imports.get(from) ?? []).flatMap((edge) =>
      edge.to === undefined ? [] : [{ from, to: edge.to }],
    ),
  );
}

/** The strongly connected parts (more than one node) of a graph: its circles. */
function circles(edges: readonly { from: string; to: string }[]): string[][] {
  const next = new Map<string, string[]>();
  for (const { from, to } of edges) next.set(from, [...(next.get(from) ?? []), to]);
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  let counter = 0;
  const visit = (node: string): void => {
    index.set(node, counter);
    low.set(node, counter);
    counter += 1;
    stack.push(node);
    onStack.add(node);
    for (const to of next.get(node) ?? []) {
      if (!index.has(to)) {
        visit(to);
        low.set(node, Math.min(low.get(node) ?? 0, low.get(to) ?? 0));
      } else if (onStack.has(to)) {
        low.set(node, Math.min(low.get(node) ?? 0, index.get(to) ?? 0));
      }
    }
    if (low.get(node) === index.get(node)) {
      const part: string[] = [];
      let member: string | undefined;
      do {
        member = stack.pop();
        if (member !== undefined) {
          onStack.delete(member);
          part.push(member);
        }
      } while (member !== undefined && member !== node);
      if (part.length > 1) found.push(part.sort());
    }
  };
  for (const node of [...new Set(edges.flatMap(({ from, to }) => [from, to]))].sort()) {
    if (!index.has(node)) visit(node);
  }
  return found;
}

/** One path around a circle, from its first member back to it: `a → b → a`. */
function roundTrip(
  part: readonly string[],
  edges: readonly { from: string; to: string }[],
): string {
  const members = new Set(part);
  const start = part[0] ?? '';
  const path = [start];
  const seen = new Set([start]);
  // Depth-first inside the circle until an edge leads back to the start.
  const walk = (node: string): boolean => {
    for (const { to } of edges.filter((edge) => edge.from === node && members.has(edge.to))) {
      if (to === start) return true;
      if (seen.has(to)) continue;
      seen.add(to);
      path.push(to);
      if (walk(to)) return true;
      path.pop();
    }
    return false;
  };
  walk(start);
  return [...path, start].join(' → ');
}

describe('import rules (docs/architecture.md)', () => {
  it('reads every file and the imports the compiler sees', () => {
    expect(graph.files.length).toBeGreaterThan(200);
    // A type-only import and a dynamic import are in the graph like any other.
    const storeImports = graph.imports.get('src/durable/stores/lazy-file-store.ts') ?? [];
    expect(storeImports.map((edge) => edge.to)).toContain('src/durable/stores/file-store.ts');
    const chainImports = graph.imports.get('src/chain/run-resources.ts') ?? [];
    expect(chainImports.map((edge) => edge.to)).toContain('src/tool-calls/approval-gate.ts');
    // Every relative import lands on a file the rules see, so no edge is silently lost.
    const known = new Set(graph.files);
    const lost = fileEdges()
      .filter(({ to }) => !known.has(to))
      .map(
        ({ from, to }) =>
          `${from} imports ${to}, which is not a .ts file under src/, machines/ or adapters/`,
      );
    expect(lost).toEqual([]);
  });

  it('has no import circle among the files of src/, machines/ and adapters/', () => {
    const edges = fileEdges();
    const broken = againstAllowList(
      circles(edges),
      allowedFileCircles,
      (part) => `import circle of ${part.length} files: ${roundTrip(part, edges)}`,
    );
    expect(broken).toEqual([]);
  });

  it('keeps machines/ pure: xstate and modules of src/ only, never node:*, an SDK or adapters/', () => {
    const broken = graph.files
      .filter((file) => file.startsWith('machines/'))
      .flatMap((file) =>
        (graph.imports.get(file) ?? [])
          .filter((edge) =>
            edge.to === undefined
              ? edge.specifier !== 'xstate'
              : !edge.to.startsWith('src/') && !edge.to.startsWith('machines/'),
          )
          .map(
            (edge) =>
              `${file} imports '${edge.specifier}': machines/ imports only xstate and modules of src/`,
          ),
      );
    expect(broken).toEqual([]);
  });

  it('keeps src/ off adapters/, except the entry files that re-export them', () => {
    const broken = graph.files
      .filter((file) => file.startsWith('src/') && !entries.has(file))
      .flatMap((file) =>
        (graph.imports.get(file) ?? [])
          .filter((edge) => edge.to?.startsWith('adapters/'))
          .map(
            (edge) =>
              `${file} imports ${edge.to}: nothing under src/ imports adapters/ (only the package's entry files re-export them)`,
          ),
      );
    expect(broken).toEqual([]);
  });

  it('imports the entry files from nowhere but other entry files', () => {
    const broken = fileEdges()
      .filter(({ from, to }) => entries.has(to) && !entries.has(from))
      .map(
        ({ from, to }) =>
          `${from} imports ${to}: an entry file is a door of the package, not a module to build on`,
      );
    expect(broken).toEqual([]);
  });

  it('places every folder of src/ either in the pure core or above machines/', () => {
    const folders = [...new Set(graph.files.filter((f) => f.startsWith('src/')).map(folderOf))];
    const unplaced = folders
      .filter((folder) => pureCore.includes(folder) === aboveMachines.includes(folder))
      .map((folder) => `${folder} is in neither or both lists of test/architecture/layers.ts`);
    expect(unplaced).toEqual([]);
  });

  it('closes the pure core: what machines/ imports, and all it imports, stays out of machines/ and the folders above it', () => {
    // The folders machines/ imports, then every folder their files import, folder by folder:
    // a folder is in the core as soon as one of its files is, since a folder is what a reader
    // (and the folder-circle rule) sees.
    const coreFolders = new Set<string>();
    const queue: string[] = [];
    const reach = (folder: string): void => {
      if (!coreFolders.has(folder)) {
        coreFolders.add(folder);
        queue.push(folder);
      }
    };
    for (const file of graph.files.filter((f) => f.startsWith('machines/'))) {
      for (const edge of graph.imports.get(file) ?? []) {
        if (edge.to?.startsWith('src/')) reach(folderOf(edge.to));
      }
    }
    const broken: string[] = [];
    while (queue.length > 0) {
      const folder = queue.shift() ?? '';
      const files = graph.files.filter((f) => folderOf(f) === folder && !entries.has(f));
      for (const file of files) {
        for (const edge of graph.imports.get(file) ?? []) {
          if (edge.to === undefined || edge.to.startsWith('adapters/')) continue;
          const target = folderOf(edge.to);
          if (target === folder) continue;
          if (target === 'machines' || !pureCore.includes(target)) {
            broken.push(
              `${file} imports ${edge.to}: ${folder} is in the pure core machines/ imports, which never imports ${target === 'machines' ? 'machines/' : `a folder above machines/ (${target})`}`,
            );
          } else {
            reach(target);
          }
        }
      }
    }
    expect(broken).toEqual([]);
    for (const folder of coreFolders) expect(pureCore).toContain(folder);
  });

  it('keeps adapters/ to their SDKs and the contracts of src/: never machines/ or a folder above it', () => {
    const broken = graph.files
      .filter((file) => file.startsWith('adapters/'))
      .flatMap((file) =>
        (graph.imports.get(file) ?? [])
          .filter(
            (edge) =>
              edge.to !== undefined &&
              !edge.to.startsWith('adapters/') &&
              !(pureCore.includes(folderOf(edge.to)) && !entries.has(edge.to)),
          )
          .map(
            (edge) =>
              `${file} imports ${edge.to}: adapters/ import only their SDK and the pure core of src/ (never machines/, the runtime, src/durable or an entry file)`,
          ),
      );
    expect(broken).toEqual([]);
  });

  it('keeps each folder on the folders listed before it in docs/architecture.md', () => {
    // The folder tables are the layers, lowest first. The files at the top of src/ (the
    // basics and the entry files) count on their own and are left to the other rules. Unlike
    // the circle rule, this one sees a new upward import even between folders already in a
    // listed circle.
    const doc = readFileSync('docs/architecture.md', 'utf8');
    const order = [...doc.matchAll(/^\| \[?`([^`]+)\/`/gm)].map((match) => match[1] ?? '');
    const listed = (a: string, b: string) =>
      allowedUpwardImports.some((entry) => entry.from === a && entry.to === b);
    const broken = fileEdges()
      .filter(({ from, to }) => folderOf(from) !== 'src' && folderOf(to) !== 'src')
      .filter(({ from, to }) => {
        const [a, b] = [folderOf(from), folderOf(to)];
        return a !== b && order.indexOf(b) > order.indexOf(a) && !listed(a, b);
      })
      .map(
        ({ from, to }) =>
          `${from} imports ${to}: ${folderOf(from)} stands on folders listed before it in docs/architecture.md, and ${folderOf(to)} is listed after it`,
      );
    const gone = allowedUpwardImports
      .filter(
        (entry) =>
          !fileEdges().some(
            ({ from, to }) => folderOf(from) === entry.from && folderOf(to) === entry.to,
          ),
      )
      .map(
        (entry) =>
          `${entry.from} no longer imports ${entry.to}: remove it from allowedUpwardImports`,
      );
    expect([...broken, ...gone]).toEqual([]);
  });

  it('has no folder circle but the listed ones, and the list only shrinks', () => {
    const edges = fileEdges()
      .map(({ from, to }) => ({ from: folderNode(from), to: folderNode(to) }))
      .filter(({ from, to }) => from !== to);
    const broken = againstAllowList(circles(edges), allowedFolderCircles, (part) => {
      // One file import for each step of the round trip, so the message shows where to cut.
      const steps = roundTrip(part, edges).split(' → ');
      const examples = steps.slice(1).map((to, i) => {
        const from = steps[i] ?? '';
        const edge = fileEdges().find(
          (e) => folderNode(e.from) === from && folderNode(e.to) === to,
        );
        return edge === undefined ? `${from} → ${to}` : `${edge.from} → ${edge.to}`;
      });
      return `folder circle among [${part.join(', ')}]: ${examples.join('; ')}`;
    });
    expect(broken).toEqual([]);
  });
});
