import type * as Crypto from 'node:crypto';

// node:crypto takes about 10 ms to load, a fifth of what `import('statecraft')` adds to
// xstate and zod; the root needs it only at run time (run ids, tool-call ids, journal request
// hashes), so it loads on first use instead of with the package. Same functions, same output.

let loaded: typeof Crypto | undefined;

function nodeCrypto(): typeof Crypto {
  loaded ??= process.getBuiltinModule('node:crypto');
  return loaded;
}

export const randomUUID: typeof Crypto.randomUUID = (options) => nodeCrypto().randomUUID(options);

export const createHash: typeof Crypto.createHash = (algorithm, options) =>
  nodeCrypto().createHash(algorithm, options);
