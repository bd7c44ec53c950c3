/**
 * The account page's access tokens, rendered in jsdom against an in-memory `/me/tokens`: making a
 * token sends its name and days and shows it once with client configuration for this deployment's
 * `/mcp` (copyable), the list shows name, created, last used and expiry, a refusal reaches the page
 * in the API's words, and revoking asks first and removes the row.
 */
import { JSDOM } from "jsdom";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { NewToken, TokenInfo } from "../../functions/src/contract";

const dom = new JSDOM("<!doctype html><html><body></body></html>", { url: "http://127.0.0.1/" });
Object.assign(globalThis, { window: dom.window, document: dom.window.document });
const { render, screen, fireEvent, waitFor, cleanup, within } = await import("@testing-library/react");
const { createElement } = await import("react");
const { TokensSection } = await import("../../web/src/account/TokensSection");
type TokensApi = import("../../web/src/account/api").TokensApi;

const API_URL = "https://us-central1-acme.cloudfunctions.net/api";
const MCP_URL = `${API_URL}/mcp`;

afterEach(() => {
  cleanup();
  vi.restoreAllMocks();
});

function apiError(status: number, error: string, message: string): Error {
  return Object.assign(new Error(`HTTP ${status}: ${JSON.stringify({ error, message })}`), { status });
}

/** `/me/tokens` over a list in memory, refusing as the API does. */
function fakeApi(start: TokenInfo[] = []) {
  const tokens = [...start];
  let n = 0;
  return {
    list: vi.fn(async () => ({ tokens: structuredClone(tokens) })),
    create: vi.fn(async (name: string, days: number): Promise<NewToken> => {
      if (days > 90) {
        throw apiError(
          400,
          "bad_request:body",
          "a token lives at most 90 days: set expires_in_days to 90 or less",
        );
      }
      const id = `${++n}`.padStart(16, "0");
      const info: TokenInfo = {
        id,
        name,
        created_at: "2026-11-27T10:00:00.000Z",
        expires_at: new Date(Date.parse("2026-11-27T10:00:00.000Z") + days * 86_400_000).toISOString(),
        last_used_at: null,
      };
      tokens.push(info);
      return { ...info, token: `qry_${id}_${"s".repeat(43)}` };
    }),
    revoke: vi.fn(async (id: string) => {
      tokens.splice(
        tokens.findIndex((t) => t.id === id),
        1,
      );
    }),
  };
}

function renderSection(start?: TokenInfo[]) {
  const api = fakeApi(start);
  render(createElement(TokensSection, { api: api as unknown as TokensApi, apiUrl: API_URL }));
  return api;
}

async function create(name: string, days: string) {
  fireEvent.change(screen.getByLabelText("Token name"), { target: { value: name } });
  fireEvent.change(screen.getByLabelText("Days until it expires"), { target: { value: days } });
  fireEvent.submit(screen.getByRole("form", { name: "Create a token" }));
}

const rowNames = () =>
  screen
    .queryAllByRole("row")
    .slice(1)
    .map((r) => within(r).getAllByRole("cell")[0]!.textContent);

describe("access tokens in the account page", () => {
  it("makes a token and shows it once, with configuration for this deployment's /mcp", async () => {
    const api = renderSection();
    await screen.findByText("No tokens yet.");
    await create("laptop IDE", "7");
    const panel = await screen.findByRole("region", { name: "New token" });
    expect(api.create).toHaveBeenCalledWith("laptop IDE", 7);
    const token = within(panel).getByLabelText("Token").textContent!;
    expect(token).toMatch(/^qry_0{15}1_s{43}$/);

    const generic = JSON.parse(within(panel).getByLabelText("MCP client configuration (JSON)").textContent!);
    expect(generic).toEqual({
      mcpServers: { quarry: { type: "http", url: MCP_URL, headers: { Authorization: `Bearer ${token}` } } },
    });
    const vscode = JSON.parse(
      within(panel).getByLabelText("VS Code configuration (.vscode/mcp.json)").textContent!,
    );
    expect(vscode.servers.quarry).toEqual({
      type: "http",
      url: MCP_URL,
      headers: { Authorization: "Bearer ${input:quarry-token}" },
    });
    expect(vscode.inputs[0]).toMatchObject({ id: "quarry-token", password: true });

    // Listed without its secret; never used yet.
    await waitFor(() => expect(rowNames()).toEqual(["laptop IDE"]));
    const row = within(screen.getAllByRole("row")[1]!);
    expect(row.getAllByRole("cell")[2]!.textContent).toBe("never");
    expect(screen.getByRole("table").textContent).not.toContain(token);

    // Once dismissed, the token is gone from the page.
    fireEvent.click(within(panel).getByRole("button", { name: "Done" }));
    expect(screen.queryByRole("region", { name: "New token" })).toBeNull();
    expect(document.body.textContent).not.toContain(token);
  });

  it("copies the configuration with the token in it", async () => {
    const writeText = vi.fn(async (_text: string) => {});
    // The page calls the global navigator (Node's, here).
    Object.defineProperty(globalThis.navigator, "clipboard", { value: { writeText }, configurable: true });
    renderSection();
    await create("cli", "30");
    const panel = await screen.findByRole("region", { name: "New token" });
    const token = within(panel).getByLabelText("Token").textContent!;
    fireEvent.click(within(panel).getByRole("button", { name: "Copy MCP client configuration (JSON)" }));
    await waitFor(() => expect(writeText).toHaveBeenCalledTimes(1));
    expect(writeText.mock.calls[0]![0]).toContain(`"Authorization": "Bearer ${token}"`);
    await within(panel).findByText("Copied");
  });

  it("shows the API's refusal in its words and makes nothing", async () => {
    const api = renderSection();
    await screen.findByText("No tokens yet.");
    await create("too long", "120");
    const alert = await screen.findByRole("alert");
    expect(alert.textContent).toBe("a token lives at most 90 days: set expires_in_days to 90 or less");
    expect(api.create).toHaveBeenCalledWith("too long", 120);
    expect(screen.queryByRole("region", { name: "New token" })).toBeNull();
    expect((screen.getByLabelText("Token name") as HTMLInputElement).value).toBe("too long");
  });

  it("lists tokens with when they were made, used and expire, and revokes one only once confirmed", async () => {
    const used: TokenInfo = {
      id: "00000000000000aa",
      name: "ci",
      created_at: "2026-10-01T08:00:00.000Z",
      expires_at: "2026-12-30T08:00:00.000Z",
      last_used_at: "2026-11-26T09:30:00.000Z",
    };
    const api = renderSection([used]);
    await waitFor(() => expect(rowNames()).toEqual(["ci"]));
    const cells = within(screen.getAllByRole("row")[1]!)
      .getAllByRole("cell")
      .map((c) => c.textContent);
    expect(cells.slice(1, 4)).toEqual(
      [used.created_at, used.last_used_at!, used.expires_at].map((d) => new Date(d).toLocaleString()),
    );

    const confirm = vi.spyOn(window, "confirm").mockReturnValueOnce(false).mockReturnValueOnce(true);
    fireEvent.click(screen.getByRole("button", { name: "Revoke ci" }));
    expect(confirm).toHaveBeenCalledTimes(1);
    expect(api.revoke).not.toHaveBeenCalled();
    fireEvent.click(screen.getByRole("button", { name: "Revoke ci" }));
    await waitFor(() => expect(rowNames()).toEqual([]));
    expect(api.revoke).toHaveBeenCalledWith("00000000000000aa");
    await screen.findByText("No tokens yet.");
  });

  it("says why the list could not be read", async () => {
    const api = fakeApi();
    api.list.mockRejectedValueOnce(
      apiError(
        403,
        "forbidden:not_member",
        "You are not a member of Quarry: ask an admin (boss@example.com).",
      ),
    );
    render(createElement(TokensSection, { api: api as unknown as TokensApi, apiUrl: API_URL }));
    expect((await screen.findByRole("alert")).textContent).toBe(
      "You are not a member of Quarry: ask an admin (boss@example.com).",
    );
  });
});
