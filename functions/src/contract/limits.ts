/**
 * Limits the page and the API share: the page's inputs enforce the same numbers the API checks,
 * so nothing a person can type is refused later for its length.
 */

/** Longest question, characters (a new question, an edited one). */
export const MAX_QUESTION_CHARS = 8_000;
/** Longest answer to a clarifying question, characters. */
export const MAX_ANSWER_CHARS = 2_000;
/** Longest note on a thumbs up/down, characters. */
export const MAX_NOTE_CHARS = 1_000;
/** Longest thread title a person can set, characters. */
export const MAX_TITLE_CHARS = 200;
/** A thread without a title is named after its first question, cut to this many characters. */
export const AUTO_TITLE_CHARS = 80;

/** Images and PDFs one question may carry. */
export const MAX_ATTACHMENTS = 5;

/** The deployment's file limits, as `/client-config` tells the page (its checks before sending). */
export interface ClientLimits {
  /** QUARRY_ATTACHMENT_MAX_MB: largest image or PDF of a question. */
  attachmentMaxMb: number;
  /** QUARRY_UPLOAD_MAX_MB: largest file brought in as a table, uncompressed. */
  uploadMaxMb: number;
  /** QUARRY_UPLOAD_MAX_FILES: files one conversation may hold. */
  uploadMaxFiles: number;
}

/** A thread's automatic title: the first question on one line, cut to {@link AUTO_TITLE_CHARS}. */
export function autoTitle(question: string): string {
  return question.replace(/\s+/g, " ").trim().slice(0, AUTO_TITLE_CHARS);
}
