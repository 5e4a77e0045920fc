/**
 * Reasoning a model writes before it acts, kept out of the scan: `<think>…</think>` (Qwen3,
 * DeepSeek-R1, GLM), a reply that starts inside the block (the template opened it, so only
 * `</think>` is printed), and gpt-oss harmony's analysis channel. Braces and calls written there
 * are thought, never an action. An unclosed `<think>` holds the rest of the reply.
 */
export function splitThinking(text: string): { thinking: string; body: string } {
  if (!text.includes('think>') && !text.includes('<|channel|>analysis')) {
    return { thinking: '', body: text }
  }
  const thoughts: string[] = []
  let body = ''
  let i = 0
  const firstClose = text.indexOf('</think>')
  const firstOpen = text.indexOf('<think>')
  if (firstClose >= 0 && (firstOpen < 0 || firstClose < firstOpen)) {
    thoughts.push(text.slice(0, firstClose))
    i = firstClose + '</think>'.length
  }
  for (;;) {
    const open = text.indexOf('<think>', i)
    if (open < 0) break
    body += text.slice(i, open)
    const close = text.indexOf('</think>', open)
    if (close < 0) {
      thoughts.push(text.slice(open + '<think>'.length))
      i = text.length
      break
    }
    thoughts.push(text.slice(open + '<think>'.length, close))
    i = close + '</think>'.length
  }
  body += text.slice(i)
  const harmony = splitAnalysis(body)
  thoughts.push(...harmony.thoughts)
  return {
    thinking: thoughts
      .map((t) => t.trim())
      .filter(Boolean)
      .join('\n'),
    body: harmony.body,
  }
}

const ANALYSIS = '<|channel|>analysis<|message|>'
const MESSAGE_END = /<\|(?:end|start|call|return)\|>/g

function splitAnalysis(text: string): { thoughts: string[]; body: string } {
  const thoughts: string[] = []
  let body = ''
  let i = 0
  for (;;) {
    const open = text.indexOf(ANALYSIS, i)
    if (open < 0) break
    body += text.slice(i, open)
    MESSAGE_END.lastIndex = open + ANALYSIS.length
    const end = MESSAGE_END.exec(text)
    const stop = end ? end.index : text.length
    thoughts.push(text.slice(open + ANALYSIS.length, stop))
    i = end && end[0] === '<|end|>' ? stop + end[0].length : stop
  }
  return { thoughts, body: body + text.slice(i) }
}
