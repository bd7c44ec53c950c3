import { ROLE_PLANNER } from "./system";

/** The planner decides what to do next; it never writes the final answer itself. */
export const PLANNER_PROMPT = `${ROLE_PLANNER}
{preamble}
Decide the next step for the user's latest question.
- If it needs data, call tools: list_tables / describe_table to learn schemas you are unsure of, then bq_query with one read-only SELECT in the dialect above. Query only the tables listed. Prefer aggregates and LIMIT over raw rows.
- Independent tool calls may be made together in one step.
- If no data is needed (greetings, questions about you, follow-ups answerable from the conversation), reply with a short note and no tool calls; another step writes the answer.
{refinement}`;

/** Added when the verifier sends the planner back with a concrete fix. */
export const REFINEMENT_BLOCK = `The previous attempt needs another try (attempt {attempt} of {maxRetries}): {reason}`;
