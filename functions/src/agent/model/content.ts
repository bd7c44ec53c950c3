/**
 * A question's images and PDFs (LangChain's standard `image` / `file` blocks, runs/attachments.ts)
 * in the form each provider reads: Gemini and Vertex AI take the standard blocks as they are
 * (their LangChain packages make `inlineData` parts of them, PDFs included); an OpenAI-compatible
 * server gets images as `image_url` parts with a data URL, and a PDF is refused before the call
 * with `model:unsupported_input` (the Chat Completions API has no PDF part every server reads).
 */
import { HumanMessage, type BaseMessage } from "@langchain/core/messages";
import { QuarryError } from "../../errors";
import type { ModelInfo } from "./errors";

type Part = Record<string, unknown> & { type?: unknown };

/** A standard `image` or `file` block (what runs/attachments.ts makes of every attachment). */
export const isAttachment = (
  p: unknown,
): p is Part & {
  type: "image" | "file";
  mimeType: string;
  data: string;
  metadata?: Record<string, unknown>;
} => !!p && typeof p === "object" && ((p as Part).type === "image" || (p as Part).type === "file");

/** Whether any message carries an image or a PDF (in either form). */
export function hasAttachments(messages: BaseMessage[]): boolean {
  return messages.some(
    (m) =>
      Array.isArray(m.content) &&
      m.content.some((p) => isAttachment(p) || (p as Part | undefined)?.type === "image_url"),
  );
}

/** `messages` with their attachments in the provider's form (new messages; the state is not touched). */
export function forProvider(messages: BaseMessage[], info: ModelInfo): BaseMessage[] {
  if (info.provider !== "openai" || !hasAttachments(messages)) return messages;
  return messages.map((m) => {
    if (!Array.isArray(m.content) || !m.content.some(isAttachment)) return m;
    const content = m.content.map((p) => {
      if (!isAttachment(p)) return p;
      if (p.type === "file") {
        throw new QuarryError(
          "model:unsupported_input",
          `The model ${info.model} is reached through an OpenAI-compatible server, which takes no PDF files. ` +
            "Ask without the PDF (paste its text, or a screenshot of the page), or use Gemini or Vertex AI, which read PDFs.",
        );
      }
      return { type: "image_url", image_url: { url: `data:${p.mimeType};base64,${p.data}` } };
    });
    return new HumanMessage({ content, ...(m.id ? { id: m.id } : {}) });
  });
}
