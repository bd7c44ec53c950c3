/**
 * The Google Chat API client of this instance (`@googleapis/chat`, loaded on first use), as the
 * app: the function's service account with the `chat.bot` scope. Against a stand-in in the
 * emulator (QUARRY_GOOGLE_CHAT_API_URL not Google's), a fixed token, since there is no service
 * account to ask.
 */
import type { chat_v1 } from "@googleapis/chat";
import { config } from "../../config";

const CHAT_BOT_SCOPE = "https://www.googleapis.com/auth/chat.bot";
const GOOGLE_API = "https://chat.googleapis.com/";

let client: Promise<chat_v1.Chat> | undefined;

export function googleChatClient(): Promise<chat_v1.Chat> {
  client ??= Promise.all([import("@googleapis/chat"), import("google-auth-library")]).then(
    ([{ chat }, { GoogleAuth, OAuth2Client }]) => {
      const { apiUrl } = config().chat.google;
      const standin = config().inEmulator && apiUrl !== GOOGLE_API;
      const auth = standin
        ? Object.assign(new OAuth2Client(), { credentials: { access_token: "emulator" } })
        : new GoogleAuth({ scopes: [CHAT_BOT_SCOPE] });
      return chat({ version: "v1", rootUrl: apiUrl, auth });
    },
  );
  return client;
}
