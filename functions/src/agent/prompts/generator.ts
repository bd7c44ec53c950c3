import { FOLLOW_UPS_MARKER, MAX_FOLLOW_UPS } from "../../contract/follow-ups";
import { ROLE_GENERATOR } from "./system";

/** The only prompt whose output is streamed to the user. */
export const GENERATOR_PROMPT = `${ROLE_GENERATOR}
{preamble}
Write the answer to the user's latest question in clear, concise Markdown.
- Ground every number in the query results below; never invent data. Mention the SQL's assumptions when they matter.
- The user sees the full result table and a chart next to your answer, so summarise rather than repeat every row.
{followUps}{clarification}{results}{failure}`;

/**
 * Follow-up questions from the same call (no extra model call): the page shows them as buttons,
 * the server drops any naming a table or column the prompt did not show.
 */
export const FOLLOW_UPS_BLOCK = `- Then, on a line of its own, write ${FOLLOW_UPS_MARKER} and up to ${MAX_FOLLOW_UPS} short questions the user could ask next, one per line starting with "- ": drill down by a dimension these tables have, compare with the previous period, or ask for the top items. Write them in plain words as the user would ask; name only tables and columns shown above. Write nothing after them.
`;

/** Added when the planner asked the user a clarifying question in this turn. */
export const CLARIFICATION_BLOCK = `You asked the user: {question}
{answer}
Answer the question as the user clarified it.
`;

/** Added when the turn's tools produced results. */
export const RESULTS_BLOCK = `Results of this turn's tool calls:
{digest}
`;

/** Added when retries ran out or the step budget was spent: the answer must say what failed. */
export const FAILURE_BLOCK = `The data could not be retrieved: {reason}
Say honestly what failed and what the user could try (rephrase, name the table or column), without pretending to have results.`;
