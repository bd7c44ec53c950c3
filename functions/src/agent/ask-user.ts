/**
 * The `ask_user` tool the planner sees (when clarifying is on). It lives beside the model call that
 * binds it, below the nodes: the planner's call offers it, the router sends its calls to the
 * `clarify` node (`nodes/clarify.ts`), which turns them into an interrupt.
 */
import { tool, type StructuredToolInterface } from "@langchain/core/tools";
import { z } from "zod";

export const ASK_USER = "ask_user";

const AskUserArgs = z.object({
  question: z.string().describe("One short question, in the user's language."),
  choices: z
    .array(z.string())
    .describe("2 to 4 short answers the user can pick from (they may also type their own)."),
});

/**
 * The tool the planner sees. It is never invoked as a tool: the graph routes its calls to the
 * `clarify` node. Its description is where the model learns when asking is allowed.
 */
export const askUserTool: StructuredToolInterface = tool(
  async () => {
    throw new Error("ask_user is handled by the clarify node, not invoked.");
  },
  {
    name: ASK_USER,
    description:
      "Ask the user one short clarifying question instead of guessing, and wait for the answer. Only when " +
      "the question is ambiguous in a way that changes the result and nothing in the rules, glossary, " +
      "notes or conversation settles it: two plausible metrics, or no time range on a very large table. " +
      "Never for wording you can resolve yourself, never together with other tools, at most once per question.",
    schema: AskUserArgs,
  },
) as unknown as StructuredToolInterface;
