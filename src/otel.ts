// `statecraft/otel`: OpenTelemetry spans for runs, model calls and tool calls in the GenAI
// semantic conventions (SPEC X4). Needs the optional peer `@opentelemetry/api`; only this
// entry imports it, so `import 'statecraft'` never does.

export { instrument } from './otel/instrument.js';
export { type OtelObserverOptions, otelObserver } from './otel/otel-observer.js';
