/**
 * The Slack Web API client of this instance (`@slack/web-api`, loaded on first use), with the bot
 * token and the API's address from the settings; refuses in words when the app is not configured.
 */
import type { WebClient } from "@slack/web-api";
import { config } from "../../config";
import { QuarryError } from "../../errors";

let client: Promise<WebClient> | undefined;

/** Throws `unavailable:chat` naming the settings when the Slack app cannot serve. */
export function assertSlackConfigured(): { signingSecret: string; botToken: string } {
  const { slack, problem } = config().chat;
  if (!slack.enabled) {
    throw new QuarryError(
      "unavailable:chat",
      "The Slack app is not turned on here: set QUARRY_SLACK=true (docs/chat.md).",
    );
  }
  if (problem || !slack.signingSecret || !slack.botToken) {
    throw new QuarryError("unavailable:chat", problem ?? "The Slack app is not configured (docs/chat.md).");
  }
  return { signingSecret: slack.signingSecret, botToken: slack.botToken };
}

/** The client, made once per instance. */
export function slackClient(): Promise<WebClient> {
  client ??= import("@slack/web-api").then(({ WebClient, LogLevel }) => {
    const { botToken } = assertSlackConfigured();
    return new WebClient(botToken, {
      slackApiUrl: config().chat.slack.apiUrl,
      logLevel: LogLevel.WARN,
      // A failed call is said in the thread, not retried for half an hour (the library's default).
      retryConfig: { retries: 2, factor: 2, minTimeout: 200, maxTimeout: 2_000 },
      timeout: 15_000,
    });
  });
  return client;
}
