// Test helpers, published as `statecraft/testing` so users test their agents the way we do.

export {
  ScriptExhaustedError,
  ScriptedModel,
  type ScriptedModelOptions,
  type ScriptedToolCall,
  type ScriptedTurn,
  type ScriptFunction,
  type ScriptStep,
} from '../adapters/models/scripted.js';
