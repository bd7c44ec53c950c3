/**
 * A TCP proxy in front of the Firestore emulator that can be told to fail: while failing it cuts
 * every open connection and drops new ones, the way a network partition or a Firestore outage
 * looks to a gRPC client. Controlled over HTTP so test workers can reach it from another process.
 */
import http from "node:http";
import net from "node:net";

export interface FaultProxy {
  /** host:port clients should use instead of the target. */
  address: string;
  /** Control URL: POST /fail?ms=N, POST /heal, GET /status (`{failing, connections, cut}`: counts so far). */
  controlUrl: string;
  close(): Promise<void>;
}

export async function startFaultProxy(targetHost: string, targetPort: number): Promise<FaultProxy> {
  let failingUntil = 0;
  let connections = 0;
  let cut = 0;
  const sockets = new Set<net.Socket>();
  const failing = () => Date.now() < failingUntil;

  const proxy = net.createServer((client) => {
    if (failing()) {
      client.destroy();
      return;
    }
    connections++;
    const upstream = net.connect(targetPort, targetHost);
    sockets.add(client);
    sockets.add(upstream);
    const drop = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on("error", drop).on("close", drop);
    upstream.on("error", drop).on("close", drop);
    client.pipe(upstream);
    upstream.pipe(client);
  });

  const control = http.createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://x");
    if (req.method === "POST" && url.pathname === "/fail") {
      failingUntil = Date.now() + Number(url.searchParams.get("ms") ?? 5000);
      cut += sockets.size / 2;
      for (const s of sockets) s.destroy();
      sockets.clear();
    } else if (req.method === "POST" && url.pathname === "/heal") {
      failingUntil = 0;
    }
    res.setHeader("content-type", "application/json");
    res.end(JSON.stringify({ failing: failing(), connections, cut }));
  });

  const listen = (srv: net.Server) =>
    new Promise<number>((resolve) =>
      srv.listen(0, "127.0.0.1", () => resolve((srv.address() as net.AddressInfo).port)),
    );
  const [proxyPort, controlPort] = await Promise.all([listen(proxy), listen(control)]);
  return {
    address: `127.0.0.1:${proxyPort}`,
    controlUrl: `http://127.0.0.1:${controlPort}`,
    close: async () => {
      for (const s of sockets) s.destroy();
      await Promise.all([new Promise((r) => proxy.close(r)), new Promise((r) => control.close(r))]);
    },
  };
}
