import { DEFAULT_THRESHOLD } from './baseline'

/** `npm run eval -- …` (docs/evals.md#the-command). */
export interface EvalArgs {
  mode: 'eval' | 'from-run' | 'replay' | 'remodel'
  /** Agents to evaluate; empty: every agent with an eval file. */
  agents: string[]
  k: number
  concurrency: number
  model: string | null
  judgeModel: string | null
  baseline: string | null
  threshold: number
  /** Where report.json and report.html go. */
  out: string
  /** `--from-run`: a run id (read from --url) or an export file. */
  fromRun: string | null
  /** The deployment `--from-run <id>` reads from; EDGELOOP_URL otherwise. */
  url: string | null
  /** Re-model: instructions to use instead of the agent's (a file). */
  instructions: string | null
  /** Outbound requests with no fake reach the network (never by default). */
  live: boolean
  /** Keep the eval deployment up after the report, for its console. */
  serve: boolean
  /** Re-model: read-only tools the recording lacks may run. */
  liveReads: boolean
  timeoutSeconds: number
}

const USAGE = `usage: npm run eval -- [agent …] [--k 3] [--concurrency 4] [--model M] [--judge-model M]
  [--baseline report.json] [--threshold ${DEFAULT_THRESHOLD}] [--out eval-report] [--timeout 120] [--live] [--serve]
  npm run eval -- --from-run <run id | export.json> [--url https://…]
  npm run eval -- --replay [agent …]
  npm run eval -- --remodel [agent …] [--model M] [--instructions file.md] [--live-reads]`

/** The command line, checked: a bad flag or value throws a message with the usage. */
export function parseEvalArgs(argv: readonly string[]): EvalArgs {
  const args: EvalArgs = {
    mode: 'eval',
    agents: [],
    k: 3,
    concurrency: 4,
    model: null,
    judgeModel: null,
    baseline: null,
    threshold: DEFAULT_THRESHOLD,
    out: 'eval-report',
    fromRun: null,
    url: null,
    instructions: null,
    live: false,
    liveReads: false,
    serve: false,
    timeoutSeconds: 120,
  }
  const bad = (why: string) => new TypeError(`${why}\n${USAGE}`)
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!
    const [flag, inline] =
      arg.startsWith('--') && arg.includes('=')
        ? [arg.slice(0, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1)]
        : [arg, undefined]
    const value = () => {
      const v = inline ?? argv[++i]
      if (v === undefined || v === '') throw bad(`${flag} needs a value`)
      return v
    }
    const whole = (min: number) => {
      const v = value()
      const n = Number(v)
      if (!Number.isInteger(n) || n < min)
        throw bad(`${flag} must be a whole number >= ${min}, got "${v}"`)
      return n
    }
    switch (flag) {
      case '--k':
        args.k = whole(1)
        break
      case '--concurrency':
        args.concurrency = whole(1)
        break
      case '--timeout':
        args.timeoutSeconds = whole(1)
        break
      case '--model':
        args.model = value()
        break
      case '--judge-model':
        args.judgeModel = value()
        break
      case '--baseline':
        args.baseline = value()
        break
      case '--out':
        args.out = value()
        break
      case '--url':
        args.url = value()
        break
      case '--instructions':
        args.instructions = value()
        break
      case '--threshold': {
        const v = value()
        const n = Number(v)
        if (!(n >= 0 && n <= 1)) throw bad(`--threshold must be between 0 and 1, got "${v}"`)
        args.threshold = n
        break
      }
      case '--from-run':
        args.mode = 'from-run'
        args.fromRun = value()
        break
      case '--replay':
        args.mode = 'replay'
        break
      case '--remodel':
        args.mode = 'remodel'
        break
      case '--live':
        args.live = true
        break
      case '--serve':
        args.serve = true
        break
      case '--live-reads':
        args.liveReads = true
        break
      case '--help':
        throw bad('')
      default:
        if (flag.startsWith('-')) throw bad(`unknown flag ${flag}`)
        args.agents.push(flag)
    }
  }
  if (args.mode === 'remodel' && !args.model && !args.instructions) {
    throw bad('--remodel needs --model or --instructions (what changes)')
  }
  return args
}
