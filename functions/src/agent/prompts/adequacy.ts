import { ROLE_ADEQUACY } from "./system";

/** Optional model check that a non-empty result actually answers the question. */
export const ADEQUACY_PROMPT = `${ROLE_ADEQUACY}
Question: {question}
Query results:
{digest}
Do these results answer the question? Reply with YES, or NO followed by a one-sentence reason and what to query instead.`;
