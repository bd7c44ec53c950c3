/**
 * Copy-paste configuration for an MCP client of this deployment's `/mcp` (the snippets of
 * docs/mcp.md#connect, with the API URL filled in). Pure.
 */

/** `/mcp` on the API's base URL (the function URL the page talks to). */
export function mcpUrl(apiUrl: string): string {
  return `${apiUrl.replace(/\/+$/, "")}/mcp`;
}

/** The shape most clients take (`mcpServers`), with the token in the header. */
export function genericConfig(url: string, token: string): string {
  const server = { type: "http", url, headers: { Authorization: `Bearer ${token}` } };
  return JSON.stringify({ mcpServers: { quarry: server } }, null, 2);
}

/** VS Code's `.vscode/mcp.json`: the token asked for once and kept in its secret storage. */
export function vscodeConfig(url: string): string {
  return JSON.stringify(
    {
      inputs: [{ id: "quarry-token", type: "promptString", description: "Quarry token", password: true }],
      servers: {
        quarry: { type: "http", url, headers: { Authorization: "Bearer ${input:quarry-token}" } },
      },
    },
    null,
    2,
  );
}
