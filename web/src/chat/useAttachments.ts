/**
 * What the person brings into the conversation by the paperclip, a drop or a paste: images and PDFs
 * become attachments of the next question (read and scaled down here), table files are handed to
 * the files panel's upload at once.
 */
import { useCallback, useState } from "react";
import { MAX_ATTACHMENTS } from "@quarry/functions/contract";
import { fileKind, unsupportedFile, type Attachment } from "../data/attachments";
import { readAttachment } from "./image";

export interface AttachmentsApi {
  attached: Attachment[];
  /** Files being read (scaled down) now: the question waits for them. */
  reading: number;
  error: string | null;
  add(files: File[]): void;
  remove(index: number): void;
  /** The attachments go with a question: the box empties. */
  take(): Attachment[];
}

export function useAttachments(maxMb: number, uploadTable: (file: File) => Promise<void>): AttachmentsApi {
  const [attached, setAttached] = useState<Attachment[]>([]);
  const [reading, setReading] = useState(0);
  const [error, setError] = useState<string | null>(null);

  const add = useCallback(
    (files: File[]) => {
      setError(null);
      const media = files.filter((f) => fileKind(f) === "image" || fileKind(f) === "pdf");
      for (const f of files) {
        const kind = fileKind(f);
        if (kind === "table") void uploadTable(f);
        else if (!kind) setError(unsupportedFile(f.name));
      }
      if (attached.length + reading + media.length > MAX_ATTACHMENTS) {
        setError(`At most ${MAX_ATTACHMENTS} images or PDFs may go with one question. Remove some first.`);
        return;
      }
      for (const f of media) {
        setReading((n) => n + 1);
        readAttachment(f, maxMb)
          .then((a) => setAttached((as) => [...as, a]))
          .catch((e: unknown) => setError(e instanceof Error ? e.message : String(e)))
          .finally(() => setReading((n) => n - 1));
      }
    },
    [attached.length, reading, maxMb, uploadTable],
  );

  const remove = useCallback((index: number) => setAttached((as) => as.filter((_, i) => i !== index)), []);

  const take = useCallback(() => {
    const out = attached;
    setAttached([]);
    setError(null);
    return out;
  }, [attached]);

  return { attached, reading, error, add, remove, take };
}
