import { Router } from "express";
import { QuarryError } from "../errors";
import { ASSISTANT_ID } from "../contract/protocol";

/** The one assistant this deployment serves, in Agent Server shape (agent-chat-ui and the SDK look it up). */
const ASSISTANT = {
  assistant_id: ASSISTANT_ID,
  graph_id: ASSISTANT_ID,
  name: "Quarry",
  description: "Conversational BigQuery analyst",
  config: {},
  context: {},
  metadata: {},
  version: 1,
  created_at: "2026-01-01T00:00:00.000Z",
  updated_at: "2026-01-01T00:00:00.000Z",
};

export function assistantRoutes(): Router {
  const r = Router();
  r.post("/assistants/search", (_req, res) => {
    res.json([ASSISTANT]);
  });
  r.get("/assistants/:assistantId", (req, res) => {
    if (req.params.assistantId !== ASSISTANT_ID) {
      throw new QuarryError(
        "not_found:assistant",
        `Assistant "${req.params.assistantId}" not found: use "${ASSISTANT_ID}".`,
      );
    }
    res.json(ASSISTANT);
  });
  return r;
}
