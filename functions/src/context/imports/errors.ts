/** An import that cannot be used, naming the file (and line or item) to fix; nothing of it is kept. */
export class ImportError extends Error {
  readonly file: string;
  /** The message without the file. */
  readonly detail: string;
  constructor(file: string, message: string) {
    super(`${file}: ${message}`);
    this.name = "ImportError";
    this.file = file;
    this.detail = message;
  }
}
