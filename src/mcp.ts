// `statecraft/mcp`: MCP servers as remote tool executors (SPEC X5, C10). The only entry that
// loads @modelcontextprotocol/sdk, an optional peer dependency: `import 'statecraft'` never does.

export type {
  McpConnectOptions,
  McpExecutorOptions,
  McpHttpTransportOptions,
  McpStdioTransportOptions,
  McpTransportOptions,
} from '../adapters/tools/mcp/options.js';
export { McpConnectionError, McpToolExecutor } from '../adapters/tools/mcp.js';
