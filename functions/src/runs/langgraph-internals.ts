/**
 * The LangGraph internals Quarry's run lifecycle relies on, in one place. LangGraph does not export
 * them; they track @langchain/langgraph 1.7.3 (`constants.ts`: NULL_TASK_ID, START, the
 * `branch:to:` trigger channels; `pregel/algo.ts`: how a node's task is found pending).
 * test/unit/langgraph-internals.test.ts runs LangGraph itself and fails if any of this changes.
 */
import type { Checkpoint } from "@langchain/langgraph-checkpoint";

/** The task id of writes that belong to no task (input, a Command's update). */
export const NULL_TASK_ID = "00000000-0000-0000-0000-000000000000";

/** The channel that triggers the graph's START node. */
const START_CHANNEL = "__start__";
/** Prefix of the channel that triggers a node after an edge: `branch:to:<node>`. */
const BRANCH_TO = "branch:to:";

/** The node a trigger channel starts, if it is one. */
function triggeredNode(channel: string): string | undefined {
  if (channel === START_CHANNEL) return channel;
  return channel.startsWith(BRANCH_TO) ? channel.slice(BRANCH_TO.length) : undefined;
}

/**
 * Whether a checkpoint has tasks still to run (a run stopped midway left them), decided as LangGraph
 * does for a graph's nodes: a trigger channel that holds a value and changed since its node last
 * saw it. Plain input discards such tasks; a Command would run them again.
 */
export function hasPendingTasks(checkpoint: Checkpoint | undefined): boolean {
  if (!checkpoint) return false;
  const values = checkpoint.channel_values ?? {};
  for (const [channel, version] of Object.entries(checkpoint.channel_versions ?? {})) {
    const node = triggeredNode(channel);
    if (!node || values[channel] === undefined) continue;
    const seen = checkpoint.versions_seen?.[node]?.[channel];
    if (seen === undefined || seen < version) return true;
  }
  return false;
}
