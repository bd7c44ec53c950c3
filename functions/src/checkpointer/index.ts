/**
 * `@quarry/functions/checkpointer`: a LangGraph.js checkpointer on Cloud Firestore, usable by any
 * LangGraph.js app. See {@link FirestoreCheckpointer}.
 */
export { FirestoreCheckpointer, type FirestoreCheckpointerOptions } from "./checkpointer";
export { FirestoreCheckpointerError, type CheckpointerErrorCode } from "./errors";
