import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { ownSourcePath } from '../package-root.js';

// Everything the viewer page loads comes from this machine (SPEC X4: it works offline): its
// own three files next to this module, and Mermaid's self-contained browser bundle from the
// installed `mermaid` package. Both are read when the viewer starts, so a missing file is a
// clear error at `statecraft view`, not a blank page later.

export interface PageAsset {
  readonly body: Buffer;
  readonly contentType: string;
}

/**
 * Where the page's own files are: src/viewer/page/, which the build copies to
 * dist/src/viewer/page/ (found from the package root: built, this code sits in a shared chunk).
 */
const pageDir = (): URL => pathToFileURL(`${ownSourcePath('viewer/page')}/`);

const PAGE_FILES = {
  '/': ['index.html', 'text/html; charset=utf-8'],
  '/viewer.css': ['viewer.css', 'text/css; charset=utf-8'],
  '/viewer.js': ['viewer.js', 'text/javascript; charset=utf-8'],
} as const;

/** The path the page loads Mermaid from. */
export const MERMAID_PATH = '/mermaid.min.js';

/** The viewer's static files by URL path. */
export async function loadPageAssets(): Promise<Map<string, PageAsset>> {
  const assets = new Map<string, PageAsset>();
  const dir = pageDir();
  for (const [path, [file, contentType]] of Object.entries(PAGE_FILES)) {
    const location = new URL(file, dir);
    try {
      assets.set(path, { body: await readFile(location), contentType });
    } catch (error) {
      throw new Error(
        `The run viewer's page file ${fileURLToPath(location)} is missing (the build copies src/viewer/page/ there).`,
        { cause: error },
      );
    }
  }
  assets.set(MERMAID_PATH, {
    body: await readFile(resolveMermaid()),
    contentType: 'text/javascript; charset=utf-8',
  });
  return assets;
}

/** The installed Mermaid browser bundle, or an error that says how to install it. */
export function resolveMermaid(
  resolve: (specifier: string) => string = createRequire(import.meta.url).resolve,
): string {
  try {
    return resolve('mermaid/dist/mermaid.min.js');
  } catch (error) {
    throw new Error(
      'The run viewer draws machines with Mermaid, which is not installed: run `npm install mermaid` (it is loaded from node_modules, never from a CDN).',
      { cause: error },
    );
  }
}
