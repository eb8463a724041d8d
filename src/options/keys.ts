/**
 * `true` when `Keys` lists every key of `Options`; otherwise an object naming the keys it
 * lacks. For a key list kept by hand (a response format's keys by type, an adapter's options
 * not yet described with ./describe.ts, whose `Describes` does this and more):
 *
 * ```ts
 * const RETRY_OPTION_KEYS = ['retries', …] as const satisfies readonly (keyof RetryOptions)[];
 * const _everyKeyListed: EveryKeyListed<RetryOptions, typeof RETRY_OPTION_KEYS> = true;
 * ```
 *
 * so the list can drift from the interface in neither direction: `satisfies` refuses a name
 * the interface lacks, and adding an option to the interface without listing it fails `tsc`
 * with "Type 'true' is not assignable to type '{ unlisted: "newOption" }'". Without this, the
 * new option would be refused at run time as unknown (SPEC Q4).
 */
export type EveryKeyListed<Options, Keys extends readonly unknown[]> = [
  Exclude<keyof Options, Keys[number]>,
] extends [never]
  ? true
  : { readonly unlisted: Exclude<keyof Options, Keys[number]> };
