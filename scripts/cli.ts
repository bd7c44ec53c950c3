/** What the project's commands (`npm run context|eval|feedback|catalog`) share. */
import { Firestore } from "@google-cloud/firestore";
import { gatherCredentialFacts } from "../functions/src/agent/model";
import type { RuntimeConfig } from "../functions/src/config";

/**
 * Firestore for a command: the emulator named by FIRESTORE_EMULATOR_HOST, or production with
 * Google credentials. Without either, refuses at once — the client would otherwise look for
 * credentials for minutes before failing.
 */
export function commandFirestore(cfg: RuntimeConfig, env: NodeJS.ProcessEnv = process.env): Firestore {
  const facts = gatherCredentialFacts(cfg.model);
  if (!env.FIRESTORE_EMULATOR_HOST && !facts.credentialsFileExists && !facts.adcFileExists) {
    throw new Error(
      "No Firestore to use: set FIRESTORE_EMULATOR_HOST=127.0.0.1:<port> (the local stack prints it), or for " +
        "production run `gcloud auth application-default login` and set GOOGLE_CLOUD_PROJECT.",
    );
  }
  return new Firestore({ projectId: cfg.projectId });
}

/** Runs a command's main: its exit code, or 1 with the error's message under `[name]`. */
export function runCommand(name: string, main: () => Promise<number>): void {
  main().then(
    (code) => process.exit(code),
    (err: unknown) => {
      console.error(`[${name}] ${(err as Error).message}`);
      process.exit(1);
    },
  );
}
