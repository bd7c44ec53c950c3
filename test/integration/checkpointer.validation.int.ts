/**
 * The official LangGraph checkpointer conformance suite (`@langchain/langgraph-checkpoint-validation`,
 * through its library API) against the Java Firestore emulator, plus its opt-in delta-channel tests.
 * Each checkpointer gets its own root collection, so "all threads" listings see only its own data.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, test } from "vitest";
import type { Firestore } from "@google-cloud/firestore";
import { deltaChannelHistoryTests, validate } from "@langchain/langgraph-checkpoint-validation";
import type { FirestoreCheckpointer } from "../../functions/src/checkpointer";
import { emulatorFirestore, freshCheckpointer } from "./checkpointer/firestore";

// The official suite calls the test runner's functions as globals (Jest style); Quarry's suites import
// them from vitest (no globals), so they are handed to it here.
Object.assign(globalThis, { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, test });

let firestore: Firestore | undefined;

const initializer = {
  checkpointerName: "FirestoreCheckpointer",
  beforeAllTimeout: 60_000,
  beforeAll() {
    firestore = emulatorFirestore();
  },
  async afterAll() {
    await firestore?.terminate();
  },
  createCheckpointer(): FirestoreCheckpointer {
    firestore ??= emulatorFirestore();
    return freshCheckpointer(firestore);
  },
};

validate(initializer);
deltaChannelHistoryTests(initializer);
