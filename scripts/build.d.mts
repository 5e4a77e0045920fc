/** Builds the slim `openai` module, the slim MCP transport and the console's assets. */
export function build(): Promise<{ slimOpenAI: string; slimMcpTransport: string; assets: string }>
