// Which model the examples run on: a real provider when its variables are set, else none
// (the example then uses its embedded scripted model and says so). Provider SDKs are
// imported only when chosen, so the examples run on a fresh clone without any key.
import type { LanguageModel } from 'statecraft';

export interface ChosenModel {
  readonly model: LanguageModel;
  /** What to tell the user, e.g. `OpenAI-compatible server at http://localhost:11434/v1 (llama3.2)`. */
  readonly description: string;
}

/**
 * - `OPENAI_BASE_URL` + `OPENAI_MODEL`: any OpenAI-compatible server (Ollama, vLLM, LM Studio,
 *   llama.cpp); `OPENAI_API_KEY` only if the server wants one.
 * - `OPENAI_API_KEY` (+ `OPENAI_MODEL`, default gpt-4.1-mini): OpenAI.
 * - `ANTHROPIC_API_KEY` (+ `ANTHROPIC_MODEL`, default claude-sonnet-4-5): Anthropic.
 * - `GEMINI_API_KEY` (+ `GEMINI_MODEL`, default gemini-2.5-flash): Gemini.
 */
export async function modelFromEnv(env = process.env): Promise<ChosenModel | undefined> {
  if (env.OPENAI_BASE_URL) {
    const { OpenAIChatModel } = await import('statecraft/openai');
    const model = env.OPENAI_MODEL;
    if (!model) throw new Error('OPENAI_BASE_URL is set: set OPENAI_MODEL to the model to use');
    return {
      model: new OpenAIChatModel({
        model,
        baseURL: env.OPENAI_BASE_URL,
        apiKey: env.OPENAI_API_KEY || 'not-needed',
        // Compatible servers read max_tokens, not OpenAI's newer max_completion_tokens.
        maxTokensField: 'max_tokens',
      }),
      description: `the OpenAI-compatible server at ${env.OPENAI_BASE_URL} (${model})`,
    };
  }
  if (env.OPENAI_API_KEY) {
    const { OpenAIChatModel } = await import('statecraft/openai');
    const model = env.OPENAI_MODEL || 'gpt-4.1-mini';
    return { model: new OpenAIChatModel({ model }), description: `OpenAI (${model})` };
  }
  if (env.ANTHROPIC_API_KEY) {
    const { AnthropicModel } = await import('statecraft/anthropic');
    const model = env.ANTHROPIC_MODEL || 'claude-sonnet-4-5';
    return { model: new AnthropicModel({ model }), description: `Anthropic (${model})` };
  }
  if (env.GEMINI_API_KEY) {
    const { GeminiModel } = await import('statecraft/gemini');
    const model = env.GEMINI_MODEL || 'gemini-2.5-flash';
    return { model: new GeminiModel({ model }), description: `Gemini (${model})` };
  }
  return undefined;
}
