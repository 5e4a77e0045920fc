import { ConfigError } from '../errors/config-error'

/** An eval file that does not match `defineEval`'s shape: names the file and every bad field. */
export class EvalFileError extends ConfigError {
  override name = 'EvalFileError'
  readonly problems: readonly string[]

  constructor(file: string, problems: readonly string[]) {
    super(file, `${file}: not a valid eval file (docs/evals.md#cases): ${problems.join('; ')}`)
    this.problems = problems
  }
}
