import { ROLE_SUMMARIZER } from "./system";

/** Folds older turns into the running summary so the history fits the context budget. */
export const SUMMARIZER_PROMPT = `${ROLE_SUMMARIZER}
Update the running summary of this conversation with the older turns below. Keep the facts later questions may need: the user's goals, tables and columns used, filters, key numbers and conclusions. At most 200 words, plain text.

Current summary:
{summary}

Older turns:
{turns}`;
