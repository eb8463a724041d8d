// An in-memory OpenTelemetry SDK for the span tests: the spans the exporter received (ended
// spans only) and how many the tracer started, so a test can check that every span ended.
import type { Tracer } from '@opentelemetry/api';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';

export const SPAN_KIND = { INTERNAL: 0, CLIENT: 2 } as const;
export const STATUS = { UNSET: 0, ERROR: 2 } as const;

export function tracing() {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const sdkTracer = provider.getTracer('statecraft-test');
  let started = 0;
  // Counts spans started through it; everything else is the SDK's tracer.
  const tracer = {
    startSpan: (...args: Parameters<Tracer['startSpan']>) => {
      started += 1;
      return sdkTracer.startSpan(...args);
    },
    startActiveSpan: sdkTracer.startActiveSpan.bind(sdkTracer),
  } as Tracer;
  const spans = () => exporter.getFinishedSpans();
  const named = (name: string) => {
    const found = spans().filter((span) => span.name === name);
    if (found.length === 0) {
      throw new Error(
        `no span named '${name}'; spans: ${spans()
          .map((s) => s.name)
          .join(', ')}`,
      );
    }
    return found;
  };
  return {
    provider,
    tracer,
    spans,
    named,
    one: (name: string) => named(name)[0] as ReadableSpan,
    /** Spans started through `tracer`, ended or not. */
    started: () => started,
  };
}

export const parentOf = (span: ReadableSpan) => span.parentSpanContext?.spanId;
export const idOf = (span: ReadableSpan) => span.spanContext().spanId;
export const ms = ([seconds, nanos]: readonly [number, number]) => seconds * 1000 + nanos / 1e6;
