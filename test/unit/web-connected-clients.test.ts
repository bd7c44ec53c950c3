/**
 * The account page's connected assistants, rendered in jsdom against an in-memory
 * `/me/oauth-clients`: each shows the host of its client ID beside the name it gives itself,
 * Disconnect asks first and then removes the row, and a refusal reaches the page in the API's words.
 */
import { JSDOM } from "jsdom";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { ConnectedClient } from "../../functions/src/contract";

const dom = new JSDOM("<!doctype html><html><body></body></html>", { url: "http://127.0.0.1/" });
Object.assign(globalThis, { window: dom.window, document: dom.window.document });
const { render, screen, fireEvent, waitFor, cleanup, within } = await import("@testing-library/react");
const { createElement } = await import("react");
const { ConnectedClientsSection } = await import("../../web/src/account/ConnectedClientsSection");
type TokensApi = import("../../web/src/account/api").TokensApi;

afterEach(() => {
  cleanup();
  vi.restoreAllMocks();
});

const claude: ConnectedClient = {
  id: "grant-claude-0001",
  clientId: "https://claude.ai/oauth/mcp.json",
  clientHost: "claude.ai",
  clientName: "Claude",
  allowedAt: "2026-11-27T10:00:00.000Z",
  expiresAt: "2026-12-27T10:00:00.000Z",
};
const posing: ConnectedClient = {
  ...claude,
  id: "grant-posing-0002",
  clientId: "https://evil.example/claude.json",
  clientHost: "evil.example",
};

function fakeApi(start: ConnectedClient[]) {
  const clients = [...start];
  return {
    clients: vi.fn(async () => ({ clients: structuredClone(clients) })),
    disconnect: vi.fn(async (id: string) => {
      const i = clients.findIndex((c) => c.id === id);
      if (i < 0) {
        throw Object.assign(
          new Error(
            `HTTP 404: ${JSON.stringify({ error: "not_found:oauth_client", message: `No connected client ${id}: GET /me/oauth-clients lists yours.` })}`,
          ),
          { status: 404 },
        );
      }
      clients.splice(i, 1);
    }),
  };
}

describe("connected assistants on the account page", () => {
  it("shows who each is by host beside its name, and disconnects one after asking", async () => {
    const api = fakeApi([claude, posing]);
    render(createElement(ConnectedClientsSection, { api: api as unknown as TokensApi }));
    const table = await screen.findByRole("table", { name: "Connected assistants" });
    const rows = within(table).getAllByRole("row").slice(1);
    expect(rows.map((r) => r.querySelector("td")!.textContent)).toEqual([
      "Claude claude.ai",
      "Claude evil.example",
    ]);
    // Declined: nothing sent.
    vi.spyOn(window, "confirm").mockReturnValueOnce(false);
    fireEvent.click(screen.getByRole("button", { name: "Disconnect Claude (evil.example)" }));
    expect(api.disconnect).not.toHaveBeenCalled();
    vi.spyOn(window, "confirm").mockReturnValueOnce(true);
    fireEvent.click(screen.getByRole("button", { name: "Disconnect Claude (evil.example)" }));
    await waitFor(() =>
      expect(screen.queryByRole("button", { name: "Disconnect Claude (evil.example)" })).toBeNull(),
    );
    expect(api.disconnect).toHaveBeenCalledWith("grant-posing-0002");
    expect(screen.getByRole("button", { name: "Disconnect Claude (claude.ai)" })).toBeTruthy();
  });

  it("says so when there are none, and shows a refusal in the API's words", async () => {
    const none = fakeApi([]);
    render(createElement(ConnectedClientsSection, { api: none as unknown as TokensApi }));
    expect(await screen.findByText("No connected assistants.")).toBeTruthy();
    cleanup();
    const gone = fakeApi([claude]);
    gone.disconnect.mockImplementationOnce(async () => {
      throw Object.assign(
        new Error(
          `HTTP 404: ${JSON.stringify({ error: "not_found:oauth_client", message: "No connected client grant-claude-0001: GET /me/oauth-clients lists yours." })}`,
        ),
        { status: 404 },
      );
    });
    render(createElement(ConnectedClientsSection, { api: gone as unknown as TokensApi }));
    vi.spyOn(window, "confirm").mockReturnValue(true);
    fireEvent.click(await screen.findByRole("button", { name: "Disconnect Claude (claude.ai)" }));
    expect((await screen.findByRole("alert")).textContent).toMatch(/No connected client grant-claude-0001/);
  });
});
