import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ownSourcePath, packageRoot } from '../src/package-root.js';

// The built package bundles modules into shared chunks, so files "beside a module" are found
// from the package root: src/ when running from source, dist/src/ when running built code.
const root = resolve('.');

describe('ownSourcePath', () => {
  it('finds the package root from any folder inside it', () => {
    expect(packageRoot(join(root, 'src/viewer'))).toBe(root);
    expect(packageRoot(join(root, 'dist/src/chunks'))).toBe(root);
    expect(packageRoot(tmpdir())).toBeUndefined();
  });

  it('points into src/ from source and into dist/src/ from built code, wherever the chunk is', () => {
    expect(ownSourcePath('viewer/page', join(root, 'src/viewer'))).toBe(
      join(root, 'src/viewer/page'),
    );
    expect(ownSourcePath('viewer/page', join(root, 'dist/src/chunks'))).toBe(
      join(root, 'dist/src/viewer/page'),
    );
    expect(ownSourcePath('viewer/page', join(root, 'dist/src/cli'))).toBe(
      join(root, 'dist/src/viewer/page'),
    );
  });
});
