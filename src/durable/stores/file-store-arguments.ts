import { OptionProblems } from '../../options/problems.js';
import { checkStoreOptions, type StoreOptions } from './store-options.js';

/**
 * `fileStore(dir, options)`'s arguments checked whole, with the options' defaults filled in.
 * Its own module so that the public fileStore can refuse bad arguments at once while the
 * store's file code loads only when the store is first used (see lazy-file-store.ts).
 */
export function checkFileStoreArguments(dir: unknown, options: unknown): Required<StoreOptions> {
  const problems = new OptionProblems('fileStore');
  if (typeof dir !== 'string' || dir.trim() === '') {
    problems.add(
      'dir',
      `fileStore(dir) takes the folder to keep journals in, a path string; got ${dir === '' ? 'an empty string' : typeof dir === 'string' ? 'a blank string' : String(dir)}`,
    );
  }
  return checkStoreOptions('fileStore', options, problems);
}
