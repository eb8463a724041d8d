import type { ObservedRun } from '../observe/run-observer.js';

// Which span a run becomes (SPEC X4), checked against the GenAI conventions
// (open-telemetry/semantic-conventions-genai, model/gen-ai/spans.yaml):
//
// - `agent`: a chain or tool loop with a model: an `invoke_agent {name}` INTERNAL span, which
//   the conventions require to name its provider. A tool loop with a planner function and no
//   model calls no model and has no provider to name: it is a plain span, not an agent.
// - `model`: a model run as a step (`fromModel`): a `chat {model}` CLIENT span, like a model
//   call inside an agent, since that is what it is.
// - `group`: a sequence or parallel run. The conventions ask for `invoke_workflow` only where
//   an instrumentation can tell a workflow, "a coordinated process composed of multiple
//   agents", apart; a sequence of two functions is not one. So it starts as a plain span and
//   becomes `invoke_workflow {name}` (with `gen_ai.workflow.name`) when an agent run starts
//   anywhere beneath it. Its name is a static, low-cardinality label as the attribute asks
//   (the composed steps' names, or the `runName` given).
// - `plain`: everything else, `{kind} {name}` INTERNAL spans with no `gen_ai.operation.name`:
//   functions, tools run as Runnables, and the wrappers retry, fallbacks and memory, which
//   are no GenAI operation of their own but keep the tree intact (an attempt of a retry is a
//   child of the retry's span).
export type RunRole = 'agent' | 'model' | 'group' | 'plain';

export function runRole(run: ObservedRun): RunRole {
  switch (run.kind) {
    case 'chain':
    case 'tool-loop':
      return run.model ? 'agent' : 'plain';
    case 'model':
      return run.model ? 'model' : 'plain';
    case 'sequence':
    case 'parallel':
      return 'group';
    default:
      return 'plain';
  }
}
