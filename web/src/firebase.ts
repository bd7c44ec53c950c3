/** Firebase app, Auth and Firestore for the page, pointed at the emulators when the config says so. */
import { initializeApp, type FirebaseApp } from "firebase/app";
import { browserLocalPersistence, connectAuthEmulator, initializeAuth, type Auth } from "firebase/auth";
import { connectFirestoreEmulator, getFirestore, type Firestore } from "firebase/firestore";
import type { ClientConfig } from "./config";

export interface FirebaseHandles {
  app: FirebaseApp;
  auth: Auth;
  db: Firestore;
}

let handles: FirebaseHandles | undefined;

/** Initialises Firebase once (the config is fixed for the page's lifetime). */
export function initFirebase(cfg: ClientConfig): FirebaseHandles {
  if (handles) return handles;
  const app = initializeApp(cfg.firebase);
  // Explicit persistence keeps the bundle free of the popup/redirect resolver until it is used.
  const auth = initializeAuth(app, { persistence: browserLocalPersistence });
  if (cfg.authEmulatorUrl) connectAuthEmulator(auth, cfg.authEmulatorUrl, { disableWarnings: true });
  const db = getFirestore(app);
  if (cfg.firestoreEmulatorHost) {
    const [host, port] = cfg.firestoreEmulatorHost.split(":");
    connectFirestoreEmulator(db, host, Number(port));
  }
  handles = { app, auth, db };
  return handles;
}
