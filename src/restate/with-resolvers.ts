// Restate's SDK (≥ 1.14) calls Promise.withResolvers, which Node 20 lacks (it came in Node 22).
// `statecraft/restate` imports this module before the SDK, so the subpath works on the Node
// versions statecraft supports. It only fills the gap: a runtime that has it keeps its own.

interface WithResolvers<T> {
  promise: Promise<T>;
  resolve: (value: T | PromiseLike<T>) => void;
  reject: (reason?: unknown) => void;
}

const promiseConstructor = Promise as unknown as {
  withResolvers?: <T>() => WithResolvers<T>;
};

if (typeof promiseConstructor.withResolvers !== 'function') {
  promiseConstructor.withResolvers = function withResolvers<T>(this: PromiseConstructor) {
    let resolve!: WithResolvers<T>['resolve'];
    let reject!: WithResolvers<T>['reject'];
    // `this`, not Promise: the spec makes it work for subclasses, as the SDK may rely on.
    const promise = new this<T>((res, rej) => {
      resolve = res;
      reject = rej;
    });
    return { promise, resolve, reject };
  };
}

export {};
