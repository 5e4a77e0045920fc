// A Markdown file imported by an agent is its text: wrangler.toml's Text rule bundles it (and
// vitest.config.ts loads it the same way in the tests); docs/agents.md.
declare module '*.md' {
  const text: string
  export default text
}
