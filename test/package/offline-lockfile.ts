import { readFile } from 'node:fs/promises';
import { join } from 'node:path';

/** One entry of package-lock.json's `packages`, as far as a scratch project's lock needs it. */
interface LockEntry {
  version?: string;
  resolved?: string;
  integrity?: string;
  link?: boolean;
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  [key: string]: unknown;
}

/** What the scratch project's package.json and its lock say about the packed tarball. */
export interface PackedPackage {
  /** The tarball, as the project's package.json names it (`file:…`). */
  spec: string;
  /** `sha512-…` of the tarball. */
  integrity: string;
  /** The tarball's package.json. */
  manifest: {
    name: string;
    version: string;
    dependencies?: Record<string, string>;
    [key: string]: unknown;
  };
}

const REGISTRY = 'https://registry.npmjs.org/';
// Kept from the packed package.json in its lock entry, as npm writes them.
const MANIFEST_FIELDS = [
  'license',
  'dependencies',
  'bin',
  'engines',
  'peerDependencies',
  'peerDependenciesMeta',
];

/**
 * A package-lock.json for a scratch project that depends on the packed tarball and on
 * `extras` (names the repository also depends on, such as zod and @types/node), with every
 * package pinned to the version and integrity the repository's own lock pins. `npm ci
 * --offline` installs it from the npm cache alone: a locked tarball with an integrity is read
 * from the cache by its digest, with no registry metadata, and the repository's `npm ci` put
 * every one of them there. (The repository's lock omits `resolved`; each entry gets the
 * registry URL npm would write, which npm only needs when the cache misses.)
 */
export async function offlineLockfile(
  repo: string,
  project: { name: string; version: string },
  packed: PackedPackage,
  extras: readonly string[],
): Promise<{ lock: object; pins: Record<string, string> }> {
  const repoLock = JSON.parse(await readFile(join(repo, 'package-lock.json'), 'utf8')) as {
    packages: Record<string, LockEntry>;
  };
  const packages: Record<string, LockEntry> = {};

  // npm's lookup: the nearest node_modules/<name> from the requiring package's folder up.
  const locate = (from: string, name: string): string => {
    for (let dir = from; ; dir = dir.slice(0, Math.max(0, dir.lastIndexOf('/node_modules/')))) {
      const at = dir ? `${dir}/node_modules/${name}` : `node_modules/${name}`;
      if (repoLock.packages[at]) return at;
      if (!dir) throw new Error(`package-lock.json has no ${name} for ${from || 'the root'}`);
    }
  };
  const add = (path: string): void => {
    if (packages[path]) return;
    const { dev, devOptional, peer, ...entry } = repoLock.packages[path] ?? {};
    const name = path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length);
    const base = name.slice(name.lastIndexOf('/') + 1);
    packages[path] = { ...entry, resolved: `${REGISTRY}${name}/-/${base}-${entry.version}.tgz` };
    const needs = { ...entry.dependencies, ...entry.optionalDependencies };
    for (const dependency of Object.keys(needs)) add(locate(path, dependency));
  };

  // The packed package sits at node_modules/<name>, where the repository is the root: its
  // dependencies resolve to the same top-level entries as the repository's own.
  for (const dependency of Object.keys(packed.manifest.dependencies ?? {}))
    add(locate('', dependency));
  const pins: Record<string, string> = {};
  for (const extra of extras) {
    const at = locate('', extra);
    add(at);
    pins[extra] = repoLock.packages[at]?.version ?? '';
  }

  const manifestFields = Object.fromEntries(
    MANIFEST_FIELDS.filter((field) => packed.manifest[field] !== undefined).map((field) => [
      field,
      packed.manifest[field],
    ]),
  );
  const dependencies = { [packed.manifest.name]: packed.spec, ...pins };
  const lock = {
    name: project.name,
    version: project.version,
    lockfileVersion: 3,
    requires: true,
    packages: {
      '': { name: project.name, version: project.version, dependencies },
      [`node_modules/${packed.manifest.name}`]: {
        version: packed.manifest.version,
        resolved: packed.spec,
        integrity: packed.integrity,
        ...manifestFields,
      },
      ...Object.fromEntries(Object.entries(packages).sort(([a], [b]) => a.localeCompare(b))),
    },
  };
  return { lock, pins };
}
