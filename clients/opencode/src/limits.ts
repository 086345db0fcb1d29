// The model's window as the sidecar's trigger should see it, for OpenCode.
//
// OpenCode compacts a session by itself once a step's usage reaches its own line: the model's
// `limit.input` less `compaction.reserved` (default: the output cap, at most 20,000) when the model
// declares an input limit, else `limit.context` less the output cap (`limit.output`, at most
// 32,000). The plugin hands the sidecar that line as the model's input limit, so the sidecar's
// trigger (`compaction.trigger_ratio` of it, 90 % by default) always comes first: the rebuild
// happens and OpenCode's own compaction never starts. OpenCode's compaction stays as the fallback
// of a turn the sidecar could not rebuild (no sidecar, a writer that failed, a rebuild refused as
// no gain): one of the two summarises, never both.

import type { ModelLimits } from 'mimo-sidecar-client';

/** OpenCode's output cap (its `OUTPUT_TOKEN_MAX`). */
export const OPENCODE_OUTPUT_MAX = 32_000;
/** The most OpenCode reserves for output under an input limit, without `compaction.reserved`. */
export const OPENCODE_RESERVED_MAX = 20_000;

export interface OpenCodeModel {
  id: string;
  providerID: string;
  limit: { context: number; output: number; input?: number };
}

export interface CompactionConfig {
  auto?: boolean;
  reserved?: number;
}

/** The usage at which OpenCode compacts by itself (0: the model declares no window). */
export function openCodeLine(model: OpenCodeModel, compaction: CompactionConfig = {}): number {
  const context = model.limit.context;
  if (!context) return 0;
  const output = Math.min(model.limit.output, OPENCODE_OUTPUT_MAX) || OPENCODE_OUTPUT_MAX;
  if (model.limit.input) {
    const reserved = compaction.reserved ?? Math.min(OPENCODE_RESERVED_MAX, output);
    return Math.max(0, model.limit.input - reserved);
  }
  return Math.max(0, context - output);
}

/** `rebuild/compute`'s `model` for an OpenCode model; undefined when it declares no window. */
export function sidecarLimits(model: OpenCodeModel, compaction: CompactionConfig = {}): ModelLimits | undefined {
  const line = openCodeLine(model, compaction);
  if (line <= 0) return undefined;
  return {
    contextWindow: model.limit.context,
    inputLimit: line,
    maxOutputTokens: Math.min(model.limit.output, OPENCODE_OUTPUT_MAX) || OPENCODE_OUTPUT_MAX,
    providerId: model.providerID,
    modelId: model.id,
  };
}
