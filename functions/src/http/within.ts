/** Bounds on Firestore calls: the Firestore client retries unavailable calls for minutes. */

/** A Firestore call (or a wait on one) that took longer than its bound. */
export class StorageTimeout extends Error {}

/** Resolves with the value, or rejects with a StorageTimeout after ms. */
export function within<T>(ms: number, p: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new StorageTimeout(`${what} took longer than ${ms} ms`)), ms);
  });
  return Promise.race([p, deadline]).finally(() => clearTimeout(timer));
}
