// Labels sit at a line start, optionally after Markdown emphasis, headings or quotes, and may
// carry a step number (`Action 2:`; the ReAct paper's prompts also write `Act 2:`, `Obs 2:`).
const STOP_LABEL =
  /^[ \t*#>]*(?:Observation|Obs|Thought|Action|Act|Final[ _]Answer)(?:[ \t]+\d+)?[ \t*]*:/gim
const THOUGHT_LABEL = /^[ \t*#>]*Thought(?:[ \t]+\d+)?[ \t*]*:[ \t*]*/i
// What introduces an action, at the end of the prose before it.
const INTRODUCER =
  /(?:```[\w-]*|<tool_call>|\[TOOL_CALLS\]|<\|python_tag\|>|\[|(?:^|\n)[ \t*#>]*Act(?:ion)?(?:[ \t]+\d+)?[ \t*]*:)\s*$/i
// Only the end of the prose can hold an introducer; matching there keeps long prose cheap.
const SUFFIX_WINDOW = 256

/** The prose before an action, without the fences, tags or labels that introduce it. */
export function thoughtBefore(text: string, at: number): string {
  let prose = text.slice(0, at).trimEnd()
  for (let k = 0; k < 4; k++) {
    const from = Math.max(0, prose.length - SUFFIX_WINDOW)
    const m = INTRODUCER.exec(prose.slice(from))
    if (!m) break
    prose = prose.slice(0, from + m.index).trimEnd()
  }
  return cleanThought(prose)
}

export function cleanThought(prose: string): string {
  return prose.trim().replace(THOUGHT_LABEL, '').trim()
}

/** Where the next ReAct label at a line start begins, at or after `from`. */
export function nextStopLabel(text: string, from: number): number {
  STOP_LABEL.lastIndex = from
  const m = STOP_LABEL.exec(text)
  return m ? m.index : text.length
}
