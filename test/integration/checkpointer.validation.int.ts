/**
 * The official LangGraph checkpointer conformance suite (`@langchain/langgraph-checkpoint-validation`,
 * through its library API) against the Java Firestore emulator, plus its opt-in delta-channel tests.
 * Each checkpointer gets its own root collection, so "all threads" listings see only its own data.
 */
import type { Firestore } from "@google-cloud/firestore";
import { deltaChannelHistoryTests, validate } from "@langchain/langgraph-checkpoint-validation";
import type { FirestoreCheckpointer } from "../../functions/src/checkpointer";
import { emulatorFirestore, freshCheckpointer } from "./checkpointer/firestore";

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
