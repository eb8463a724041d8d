// `statecraft/viz`: diagrams of any XState v5 machine, as JSON and as Mermaid text.

export {
  type ActionJSON,
  type GuardJSON,
  type InvokeJSON,
  type JsonValue,
  type MachineJSON,
  type StateNodeJSON,
  type TransitionJSON,
  toJSON,
} from './viz/to-json.js';
export {
  type MermaidDirection,
  type MermaidOptions,
  stateIdOf,
  stateIdsOf,
  toMermaid,
} from './viz/to-mermaid.js';
