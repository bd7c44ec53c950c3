/**
 * The ports the launcher picks with `--ports=auto` (the test stacks, the benches): free, and below
 * the range the OS hands out by itself, so no outgoing connection or port-0 server elsewhere on a
 * busy machine can take one between the pick and the emulator's bind.
 */
import { describe, expect, it } from "vitest";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import net from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { ephemeralRange, freePort, isPortFree } from "../../scripts/stack.mjs";

function rangeFile(text: string): { file: string; done: () => void } {
  const dir = mkdtempSync(path.join(tmpdir(), "quarry-ports-"));
  const file = path.join(dir, "ip_local_port_range");
  writeFileSync(file, text);
  return { file, done: () => rmSync(dir, { recursive: true, force: true }) };
}

/** Listens on a port the OS picks from its own range, as any other test's server does. */
async function osServer(): Promise<net.Server> {
  const srv = net.createServer();
  await new Promise<void>((r) => srv.listen({ port: 0, host: "127.0.0.1" }, r));
  return srv;
}

describe("ports picked automatically", () => {
  it("reads the OS's own range as Linux writes it, and nothing from a file that is not one", () => {
    const linux = rangeFile("32768\t60999\n");
    const garbage = rangeFile("not a range\n");
    try {
      expect(ephemeralRange(linux.file)).toEqual({ low: 32768, high: 60999 });
      expect(ephemeralRange(garbage.file)).toBeNull();
      expect(ephemeralRange(path.join(tmpdir(), "quarry-no-such-file"))).toBeNull();
    } finally {
      linux.done();
      garbage.done();
    }
  });

  it("are free and below the OS's range, never among the ports the OS is handing out", async () => {
    const range = { low: 32768, high: 60999 };
    const servers = await Promise.all(Array.from({ length: 5 }, osServer));
    try {
      const taken = servers.map((s) => (s.address() as net.AddressInfo).port);
      for (let i = 0; i < 20; i++) {
        const port = await freePort(range);
        expect(port).toBeGreaterThanOrEqual(15_000);
        expect(port).toBeLessThan(range.low);
        expect(taken).not.toContain(port);
        expect(await isPortFree(port)).toBe(true);
      }
    } finally {
      await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
    }
  });

  it("come from the OS where its range leaves too little room below it, or cannot be read", async () => {
    for (const range of [{ low: 15_500, high: 60999 }, null]) {
      const port = await freePort(range);
      expect(await isPortFree(port)).toBe(true);
      const os = ephemeralRange();
      if (os) expect(port).toBeGreaterThanOrEqual(os.low);
    }
  });
});
