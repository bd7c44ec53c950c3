import { describe, it, expect } from "vitest";
import { DEBIAN_CHROMIUM, chooseBrowser, type ChoiceInput } from "../support/browser";

/** A Linux x64 machine holding exactly `files`. */
const machine = (
  env: ChoiceInput["env"],
  files: string[] = [],
  platform = "linux",
  arch = "x64",
): ChoiceInput => ({
  env,
  exists: (f) => files.includes(f),
  platform,
  arch,
});

describe("chooseBrowser", () => {
  it("prefers QUARRY_CHROMIUM, then Debian's Chromium, then the bundled one", () => {
    expect(
      chooseBrowser(machine({ QUARRY_CHROMIUM: "/opt/chrome" }, ["/opt/chrome", DEBIAN_CHROMIUM])),
    ).toEqual({
      kind: "system",
      path: "/opt/chrome",
      source: "QUARRY_CHROMIUM",
    });
    expect(chooseBrowser(machine({}, [DEBIAN_CHROMIUM]))).toEqual({
      kind: "system",
      path: DEBIAN_CHROMIUM,
      source: "debian",
    });
    expect(chooseBrowser(machine({}))).toEqual({ kind: "bundled" });
  });

  it("refuses a QUARRY_CHROMIUM that does not exist instead of silently using another browser", () => {
    expect(() => chooseBrowser(machine({ QUARRY_CHROMIUM: "/opt/chrome" }, [DEBIAN_CHROMIUM]))).toThrow(
      /QUARRY_CHROMIUM=\/opt\/chrome does not exist/,
    );
  });

  it("treats an empty QUARRY_CHROMIUM or QUARRY_BROWSER as unset", () => {
    expect(
      chooseBrowser(machine({ QUARRY_CHROMIUM: "", QUARRY_BROWSER: " " }, [DEBIAN_CHROMIUM])),
    ).toMatchObject({
      source: "debian",
    });
  });

  it("QUARRY_BROWSER=bundled wins over an installed and a configured Chromium", () => {
    expect(
      chooseBrowser(
        machine({ QUARRY_BROWSER: "bundled", QUARRY_CHROMIUM: "/opt/chrome" }, [
          "/opt/chrome",
          DEBIAN_CHROMIUM,
        ]),
      ),
    ).toEqual({ kind: "bundled" });
  });

  it("QUARRY_BROWSER=system never falls back to the bundled Chromium", () => {
    expect(chooseBrowser(machine({ QUARRY_BROWSER: "system" }, [DEBIAN_CHROMIUM]))).toMatchObject({
      source: "debian",
    });
    expect(() => chooseBrowser(machine({ QUARRY_BROWSER: "system" }))).toThrow(
      /QUARRY_BROWSER=system, but \/usr\/bin\/chromium does not exist.*apt-get install chromium.*QUARRY_CHROMIUM/,
    );
  });

  it("rejects an unknown QUARRY_BROWSER", () => {
    expect(() => chooseBrowser(machine({ QUARRY_BROWSER: "chrome" }, [DEBIAN_CHROMIUM]))).toThrow(
      /QUARRY_BROWSER=chrome is not understood/,
    );
  });

  it("offers the bundled Chromium on Linux x64 only, and says what to set elsewhere", () => {
    expect(() => chooseBrowser(machine({}, [], "darwin", "arm64"))).toThrow(
      /Linux x64 only \(this is darwin arm64\).*Set QUARRY_CHROMIUM/,
    );
    expect(() => chooseBrowser(machine({ QUARRY_BROWSER: "bundled" }, [], "linux", "arm64"))).toThrow(
      /linux arm64/,
    );
    // A usable system Chromium is still chosen there.
    expect(chooseBrowser(machine({}, [DEBIAN_CHROMIUM], "linux", "arm64"))).toMatchObject({
      source: "debian",
    });
  });
});
