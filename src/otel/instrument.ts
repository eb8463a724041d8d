import type { Tracer } from '@opentelemetry/api';
import { observeRuns } from '../observe/registry.js';
import { type OtelObserverOptions, otelObserver } from './otel-observer.js';

/** What `instrument()` without a tracer records to: the global provider's, whichever it is. */
const GLOBAL_TRACER: unique symbol = Symbol('statecraft.otel.globalTracer');

/** The instrumentation in effect for each tracer: its stop function. */
const current = new Map<Tracer | typeof GLOBAL_TRACER, () => void>();

/**
 * Records every run in this process as OpenTelemetry spans from now on:
 * `observeRuns(otelObserver(options))`. Returns the function that stops it.
 *
 * Once per tracer: a second `instrument()` for the same tracer (the same Tracer object, or
 * none for both) replaces the first, so two modules that each instrument do not export every
 * span twice, and the later options (e.g. `captureContent`) apply. The replaced call's stop
 * function then does nothing; the current one's stops recording to that tracer.
 */
export function instrument(options?: OtelObserverOptions): () => void {
  const observer = otelObserver(options);
  const key = options?.tracer ?? GLOBAL_TRACER;
  current.get(key)?.();
  const unregister = observeRuns(observer);
  const stop = (): void => {
    if (current.get(key) === stop) current.delete(key);
    unregister();
  };
  current.set(key, stop);
  return stop;
}
