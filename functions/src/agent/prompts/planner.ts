import { ROLE_PLANNER } from "./system";

/** The planner decides what to do next; it never writes the final answer itself. */
export const PLANNER_PROMPT = `${ROLE_PLANNER}
{preamble}
Decide the next step for the user's latest question.
- If it needs data, call tools: list_tables / describe_table to learn schemas you are unsure of, then bq_query with one read-only SELECT in the dialect above. Query only the tables listed. Prefer aggregates and LIMIT over raw rows. With bq_query, state its facts: the team's terms it computes (as the glossary names them), its filters with their values, its time range and grain, and caveats (currency, unit, values left out) — only what the SQL does.
- Independent tool calls may be made together in one step.
- If no data is needed (greetings, questions about you, follow-ups answerable from the conversation), reply with a short note and no tool calls; another step writes the answer.
{asking}{refinement}`;

/** Added when the planner may ask the user (ask_user is bound). */
export const ASKING_BLOCK = `- Only if the question is ambiguous in a way that changes the result and nothing above (rules, glossary, notes, the conversation) settles it — two plausible metrics, or no time range on a very large table — call ask_user alone with one short question and 2–4 choices instead of guessing. Otherwise never ask.
`;

/** Added when the verifier sends the planner back with a concrete fix. */
export const REFINEMENT_BLOCK = `The previous attempt needs another try (attempt {attempt} of {maxRetries}): {reason}`;
