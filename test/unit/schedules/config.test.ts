import { describe, expect, it } from "vitest";
import { ConfigError, readConfig } from "../../../functions/src/config";
import { scheduleTickCadence } from "../../../functions/src/config/schedules";

const base = { GCLOUD_PROJECT: "demo-x", VERTEX_AI_EMULATOR_HOST: "127.0.0.1:1" };

describe("schedule settings", () => {
  it("default to 20 schedules a person, a tick every 5 minutes, no mail, no loopback webhooks", () => {
    expect(readConfig(base).schedules).toEqual({
      maxPerPerson: 20,
      tickMinutes: 5,
      mailCollection: undefined,
      appUrl: undefined,
      loopbackWebhook: false,
    });
    expect(scheduleTickCadence({})).toBe("every 5 minutes");
    expect(scheduleTickCadence({ QUARRY_SCHEDULE_TICK_MINUTES: "15" })).toBe("every 15 minutes");
  });

  it("read the limit, the mail collection and the page's address", () => {
    const c = readConfig({
      ...base,
      QUARRY_MAX_SCHEDULES: "3",
      QUARRY_MAIL_COLLECTION: "mail",
      QUARRY_APP_URL: "https://quarry.example.com",
    }).schedules;
    expect(c).toMatchObject({
      maxPerPerson: 3,
      mailCollection: "mail",
      appUrl: "https://quarry.example.com",
    });
  });

  it("honour loopback webhooks only against the Firestore emulator", () => {
    const on = { ...base, QUARRY_SCHEDULE_LOOPBACK_WEBHOOK: "true" };
    expect(readConfig(on).schedules.loopbackWebhook).toBe(false);
    expect(readConfig({ ...on, FIRESTORE_EMULATOR_HOST: "127.0.0.1:8080" }).schedules.loopbackWebhook).toBe(
      true,
    );
  });

  it("refuse a tick outside 1–60 minutes, naming the setting", () => {
    expect(() => scheduleTickCadence({ QUARRY_SCHEDULE_TICK_MINUTES: "0" })).toThrow(ConfigError);
    expect(() => readConfig({ ...base, QUARRY_SCHEDULE_TICK_MINUTES: "90" })).toThrow(
      /QUARRY_SCHEDULE_TICK_MINUTES/,
    );
  });
});
