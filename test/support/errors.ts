/** Runs `fn` and returns the error of the given class it throws; fails the test otherwise. */
export function thrownBy<E>(
  errorClass: { isInstance(value: unknown): value is E; name: string },
  fn: () => unknown,
): E {
  try {
    fn();
  } catch (error) {
    if (errorClass.isInstance(error)) return error;
    throw error;
  }
  throw new Error(`expected a ${errorClass.name}, but nothing was thrown`);
}
