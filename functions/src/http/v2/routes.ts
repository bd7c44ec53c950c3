/** The Agent Streaming Protocol v2 over HTTP/SSE, beside the v1 run routes (docs/streaming-v2.md). */
import { Router, type NextFunction, type Request, type Response } from "express";
import { handleCommand } from "./commands";
import { toErrorResponse } from "./errors";
import { streamEvents } from "./stream";

export function v2Routes(): Router {
  const r = Router();
  r.post("/threads/:threadId/commands", protocolErrors(handleCommand));
  r.post("/threads/:threadId/stream/events", protocolErrors(streamEvents));
  // The protocol's spec names the SSE route /stream; the SDK opens /stream/events.
  r.post("/threads/:threadId/stream", protocolErrors(streamEvents));
  return r;
}

/** Errors before the response starts answer with the protocol's error response (and their HTTP status). */
function protocolErrors(handler: (req: Request, res: Response) => Promise<void>) {
  return (req: Request, res: Response, next: NextFunction) => {
    handler(req, res).catch((err: unknown) => {
      if (res.headersSent) return next(err);
      const { status, body } = toErrorResponse(err, null);
      res.status(status).json(body);
    });
  };
}
