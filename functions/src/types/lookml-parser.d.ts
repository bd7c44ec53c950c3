/** The part of lookml-parser (no types of its own) that lookml.ts uses. */
declare module "lookml-parser" {
  export function parseFiles(opts: Record<string, unknown>): Promise<Record<string, unknown>>;
}
