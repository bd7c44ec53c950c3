/**
 * Feedback on an answer, shared by every channel that takes it (the page's `POST
 * /threads/:id/feedback`, a chat app's 👍/👎): the answered turn read from the owner's thread, and
 * one `feedback/{id}` document per answer and voter (voting again replaces it). An up-vote on an
 * answer that ran SQL is a *proposed* verified query (docs/context.md).
 */
import { createHash } from "node:crypto";
import type { BaseMessage } from "@langchain/core/messages";
import { config } from "../config";
import { QuarryError } from "../errors";
import { firestore } from "../services";
import { agentGraph, threadStore } from "./runtime";

export interface AnsweredTurn {
  question: string;
  answer: string;
  /** The last query of the turn that returned a result (what the answer is based on). */
  sql?: string;
}

const text = (m: BaseMessage) => (typeof m.content === "string" ? m.content : JSON.stringify(m.content));

/** The turn that starts with the human message `questionId`: its question, answer and SQL (pure). */
function findTurn(messages: BaseMessage[], questionId: string): AnsweredTurn | undefined {
  const start = messages.findIndex((m) => m.getType() === "human" && m.id === questionId);
  if (start < 0) return undefined;
  let end = messages.findIndex((m, i) => i > start && m.getType() === "human");
  if (end < 0) end = messages.length;
  const turn = messages.slice(start + 1, end);
  const answer = [...turn]
    .reverse()
    .find((m) => m.getType() === "ai" && !(m as { tool_calls?: unknown[] }).tool_calls?.length);
  if (!answer) return undefined;
  let sql: string | undefined;
  for (const m of turn) {
    const artifact = (m as { artifact?: { kind?: string; result?: { sql?: string } } }).artifact;
    if (m.getType() === "tool" && artifact?.kind === "query" && artifact.result?.sql)
      sql = artifact.result.sql;
  }
  return { question: text(messages[start]), answer: text(answer), ...(sql ? { sql } : {}) };
}

/** The answered turn `questionId` of the caller's thread, or the 404 that says so. */
export async function answeredTurn(threadId: string, uid: string, questionId: string): Promise<AnsweredTurn> {
  await (await threadStore()).get(threadId, uid);
  const state = await (await agentGraph()).getState({ configurable: { thread_id: threadId } });
  const turn = findTurn((state.values.messages ?? []) as BaseMessage[], questionId);
  if (!turn) {
    throw new QuarryError(
      "not_found:message",
      `No answered question ${questionId} in this thread: send the id of a question that has an answer.`,
    );
  }
  return turn;
}

/** One vote: who votes, whose thread the answer is in (the same person in the page). */
export interface Vote {
  uid: string;
  owner: string;
  threadId: string;
  questionId: string;
  score: 1 | -1;
  note?: string;
  /** The channel it came through when not the page. */
  via?: string;
}

/** Stores a vote on the answered turn `questionId` of the owner's thread (404 when there is none). */
export async function recordFeedback(vote: Vote): Promise<{ id: string; status: "proposed" | "recorded" }> {
  const turn = await answeredTurn(vote.threadId, vote.owner, vote.questionId);
  const id = createHash("sha256")
    .update(`${vote.threadId}/${vote.questionId}/${vote.uid}`)
    .digest("hex")
    .slice(0, 40);
  const status = vote.score === 1 && turn.sql ? "proposed" : "recorded";
  const { FieldValue } = await import("firebase-admin/firestore");
  await (
    await firestore()
  )
    .collection(config().feedbackCollection)
    .doc(id)
    .set({
      uid: vote.uid,
      threadId: vote.threadId,
      questionId: vote.questionId,
      score: vote.score,
      note: vote.note ?? null,
      question: turn.question,
      answer: turn.answer.slice(0, 4000),
      sql: turn.sql ?? null,
      status,
      ...(vote.owner !== vote.uid ? { owner: vote.owner } : {}),
      ...(vote.via ? { via: vote.via } : {}),
      createdAt: FieldValue.serverTimestamp(),
    });
  return { id, status };
}
