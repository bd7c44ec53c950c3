/**
 * Files as tables in the browser (`/threads/:id/files`): TODO, waiting for the API's routes. Each
 * step below is a test to write against the whole local stack (DuckDB warehouse), as in
 * attachments.e2e.ts; none of them runs yet.
 */
import { describe, it } from "vitest";

describe("files as tables in a conversation", () => {
  it.todo(
    "a CSV dropped on a new conversation is uploaded at once, opens the thread, and the files panel shows uploads.<name>, rows, columns with types and the first rows",
  );
  it.todo("the files panel lists the conversation's files again after a reload (GET /threads/:id/files)");
  it.todo("a question joining the uploaded table with shop.orders is answered from it");
  it.todo("a ragged CSV is refused with the server's words naming the line (bad_request:upload)");
  it.todo("a 60 MB file is refused in the page before it is read or sent (no request reaches the API)");
  it.todo("a 12 MB CSV is sent gzip-compressed (Content-Type application/gzip) and read whole");
  it.todo(
    "a two-sheet xlsx shows the sheet read; picking the other re-uploads it with &sheet= and replaces the table",
  );
  it.todo("Delete removes the file from the panel and from the conversation (a question no longer finds it)");
  it.todo("the same file name twice is refused in the server's words (conflict:upload)");
});
