/**
 * Feedback on an answer: `POST /threads/:threadId/feedback` with `{ question_id, score: 1 | -1,
 * note? }` — the answer to the question with that message id, in the caller's own thread (another
 * user's thread answers 404, like every thread route). Stored server-side in `feedback/{id}` (one
 * per answer and person; voting again replaces it); clients cannot touch the collection
 * (firestore.rules). An up-vote on an answer that ran SQL becomes a *proposed* verified query,
 * which becomes an example only when someone approves it with `npm run feedback` (scripts/feedback.ts).
 *
 * `POST /threads/:threadId/verify` with `{ question_id }`: "Ask the data team to verify" — the
 * answer's question and SQL filed as a proposal into the admin page's review, where approving it
 * makes it a verified query (the next answer with that SQL is marked verified). An answer that ran
 * no SQL is a 400; asking twice files it once.
 */
import { createHash } from "node:crypto";
import { Router } from "express";
import { z } from "zod";
import { config } from "../config";
import { QuarryError } from "../errors";
import { firestore } from "../services";
import { callerOf } from "../access/caller";
import { answeredTurn, recordFeedback } from "../runs/feedback";
import { ThreadIdParam, parse } from "../runs/schemas";

const FeedbackBody = z.strictObject({
  question_id: z.string().min(1).max(200),
  score: z.union([z.literal(1), z.literal(-1)]),
  note: z.string().trim().max(1000).optional(),
});

const VerifyBody = z.strictObject({ question_id: z.string().min(1).max(200) });

export function feedbackRoutes(): Router {
  const r = Router();
  r.post("/threads/:threadId/verify", async (req, res) => {
    const { uid } = callerOf(req);
    const threadId = parse(ThreadIdParam, req.params.threadId, "path");
    const body = parse(VerifyBody, req.body ?? {}, "body");
    const turn = await answeredTurn(threadId, uid, body.question_id);
    if (!turn.sql) {
      throw new QuarryError(
        "bad_request:body",
        "This answer ran no SQL: there is nothing for the data team to verify. Ask a question about the data first.",
      );
    }
    const id = createHash("sha256")
      .update(`verify/${threadId}/${body.question_id}`)
      .digest("hex")
      .slice(0, 40);
    const { FieldValue } = await import("firebase-admin/firestore");
    const ref = (await firestore()).collection(config().feedbackCollection).doc(id);
    const created = await ref
      .create({
        uid,
        threadId,
        questionId: body.question_id,
        score: null,
        note: "Asked to verify from the answer.",
        question: turn.question,
        answer: turn.answer.slice(0, 4000),
        sql: turn.sql,
        status: "proposed",
        source: "verify",
        createdAt: FieldValue.serverTimestamp(),
      })
      .then(
        () => true,
        (err: { code?: number }) => {
          if (err.code === 6) return false; // ALREADY_EXISTS: asked before
          throw err;
        },
      );
    const status = created ? "proposed" : ((await ref.get()).get("status") as string);
    res.status(created ? 201 : 200).json({ proposal_id: id, status });
  });
  r.post("/threads/:threadId/feedback", async (req, res) => {
    const { uid } = callerOf(req);
    const threadId = parse(ThreadIdParam, req.params.threadId, "path");
    const body = parse(FeedbackBody, req.body ?? {}, "body");
    const { id, status } = await recordFeedback({
      uid,
      owner: uid,
      threadId,
      questionId: body.question_id,
      score: body.score,
      ...(body.note ? { note: body.note } : {}),
    });
    res.status(201).json({ feedback_id: id, status });
  });
  return r;
}
