/**
 * Arithmetic for the `calculator` tool: a tokenizer and a recursive-descent parser that
 * evaluates as it parses. No `eval`, no `Function`: the grammar below is all it understands.
 *
 *   expression := term (('+' | '-') term)*
 *   term       := unary (('*' | '/' | '%') unary)*
 *   unary      := ('-' | '+') unary | power
 *   power      := primary (('^' | '**') unary)?        right-associative; -2^2 = -(2^2)
 *   primary    := number | constant | name '(' expression (',' expression)* ')' | '(' expression ')'
 *
 * Every error is a `CalculatorError` whose message says what was wrong and where (1-based
 * position), so the model can fix its expression and try again.
 */
import { ToolError } from '../src/errors/tool-error'

export const MAX_EXPRESSION_LENGTH = 1000
export const MAX_NESTING = 50

/** A mistake in the expression the caller can fix; the message says what and where. */
export class CalculatorError extends ToolError {
  override name = 'CalculatorError'
}

type TokenKind = 'number' | 'name' | 'op' | '(' | ')' | ',' | 'end'
interface Token {
  kind: TokenKind
  text: string
  /** 1-based column of the token's first character. */
  pos: number
  value?: number
}

const CONSTANTS: Record<string, number> = { pi: Math.PI, e: Math.E }

interface Fn {
  arity: [min: number, max: number]
  usage: string
  apply: (args: number[]) => number
}

const FUNCTIONS: Record<string, Fn> = {
  round: {
    arity: [1, 2],
    usage: 'round(x) or round(x, digits)',
    apply: ([x, digits = 0]) => {
      if (!Number.isInteger(digits) || digits < 0 || digits > 15) {
        throw new CalculatorError(
          `round: digits must be a whole number from 0 to 15, got ${digits}`,
        )
      }
      const f = 10 ** digits
      return Math.round(x! * f) / f
    },
  },
  sqrt: { arity: [1, 1], usage: 'sqrt(x)', apply: ([x]) => Math.sqrt(x!) },
  abs: { arity: [1, 1], usage: 'abs(x)', apply: ([x]) => Math.abs(x!) },
  floor: { arity: [1, 1], usage: 'floor(x)', apply: ([x]) => Math.floor(x!) },
  ceil: { arity: [1, 1], usage: 'ceil(x)', apply: ([x]) => Math.ceil(x!) },
  min: { arity: [1, Infinity], usage: 'min(a, b, ...)', apply: (xs) => Math.min(...xs) },
  max: { arity: [1, Infinity], usage: 'max(a, b, ...)', apply: (xs) => Math.max(...xs) },
  pow: { arity: [2, 2], usage: 'pow(base, exponent)', apply: ([b, x]) => b! ** x! },
  log: {
    arity: [1, 2],
    usage: 'log(x) (base 10) or log(x, base)',
    apply: ([x, base]) => (base === undefined ? Math.log10(x!) : Math.log(x!) / Math.log(base)),
  },
  ln: { arity: [1, 1], usage: 'ln(x)', apply: ([x]) => Math.log(x!) },
  exp: { arity: [1, 1], usage: 'exp(x)', apply: ([x]) => Math.exp(x!) },
}

const KNOWN_NAMES =
  `constants ${Object.keys(CONSTANTS).join(', ')}; ` +
  `functions ${Object.keys(FUNCTIONS).join(', ')}`

/** Evaluates an arithmetic expression; throws `CalculatorError` with an actionable message. */
export function evaluate(expression: string): number {
  if (expression.length > MAX_EXPRESSION_LENGTH) {
    throw new CalculatorError(
      `expression is ${expression.length} characters; the limit is ${MAX_EXPRESSION_LENGTH}. ` +
        'Split the calculation into smaller steps.',
    )
  }
  if (!expression.trim()) throw new CalculatorError('empty expression; write e.g. "2 + 3 * 4"')
  return new Parser(tokenize(expression)).parse()
}

function tokenize(src: string): Token[] {
  const tokens: Token[] = []
  let i = 0
  while (i < src.length) {
    const ch = src[i]!
    const pos = i + 1
    if (/\s/.test(ch)) {
      i++
    } else if (/[0-9.]/.test(ch)) {
      const m = /^(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?/.exec(src.slice(i))
      const after = m ? src[i + m[0].length] : undefined
      if (!m || (after !== undefined && /[0-9.eE]/.test(after))) {
        const bad = /^[0-9.eE+-]*/.exec(src.slice(i))![0] || ch
        throw new CalculatorError(
          `malformed number "${bad}" at position ${pos}; write numbers like 42, 3.14 or 1e3`,
        )
      }
      tokens.push({ kind: 'number', text: m[0], pos, value: Number(m[0]) })
      i += m[0].length
    } else if (/[a-zA-Z_]/.test(ch)) {
      const name = /^[a-zA-Z_][a-zA-Z0-9_]*/.exec(src.slice(i))![0]
      tokens.push({ kind: 'name', text: name, pos })
      i += name.length
    } else if (src.startsWith('**', i)) {
      tokens.push({ kind: 'op', text: '^', pos })
      i += 2
    } else if ('+-*/%^'.includes(ch)) {
      tokens.push({ kind: 'op', text: ch, pos })
      i++
    } else if (ch === '(' || ch === ')' || ch === ',') {
      tokens.push({ kind: ch, text: ch, pos })
      i++
    } else {
      throw new CalculatorError(
        `unexpected character "${ch}" at position ${pos}; use numbers, + - * / % ^, parentheses, ` +
          `commas and ${KNOWN_NAMES}`,
      )
    }
  }
  tokens.push({ kind: 'end', text: 'end of expression', pos: src.length + 1 })
  return tokens
}

class Parser {
  #i = 0
  #depth = 0

  constructor(private readonly tokens: Token[]) {}

  parse(): number {
    const value = this.#expression()
    const t = this.#peek()
    if (t.kind !== 'end') throw unexpected(t, 'an operator or the end of the expression')
    return value
  }

  #peek(): Token {
    return this.tokens[this.#i]!
  }

  #next(): Token {
    return this.tokens[this.#i++]!
  }

  #expression(): number {
    let left = this.#term()
    for (
      let t = this.#peek();
      t.kind === 'op' && (t.text === '+' || t.text === '-');
      t = this.#peek()
    ) {
      this.#next()
      const right = this.#term()
      left = finite(t.text === '+' ? left + right : left - right, t)
    }
    return left
  }

  #term(): number {
    let left = this.#unary()
    for (let t = this.#peek(); t.kind === 'op' && '*/%'.includes(t.text); t = this.#peek()) {
      this.#next()
      const right = this.#unary()
      if (t.text !== '*' && right === 0) {
        throw new CalculatorError(
          `division by zero: the right side of "${t.text}" at position ${t.pos} is 0`,
        )
      }
      left = finite(t.text === '*' ? left * right : t.text === '/' ? left / right : left % right, t)
    }
    return left
  }

  // Unary signs, powers and parentheses recurse; each level counts toward MAX_NESTING.
  #unary(): number {
    if (++this.#depth > MAX_NESTING) {
      throw new CalculatorError(
        `expression nests deeper than ${MAX_NESTING} levels (parentheses, signs, powers) at ` +
          `position ${this.#peek().pos}; simplify it or split it into steps`,
      )
    }
    try {
      const t = this.#peek()
      if (t.kind === 'op' && (t.text === '-' || t.text === '+')) {
        this.#next()
        const operand = this.#unary()
        return t.text === '-' ? -operand : operand
      }
      return this.#power()
    } finally {
      this.#depth--
    }
  }

  #power(): number {
    const base = this.#primary()
    const t = this.#peek()
    if (t.kind !== 'op' || t.text !== '^') return base
    this.#next()
    const exponent = this.#unary()
    return finite(base ** exponent, t)
  }

  #primary(): number {
    const t = this.#next()
    if (t.kind === 'number') return finite(t.value!, t)
    if (t.kind === '(') {
      const value = this.#expression()
      this.#expect(')', `")" to close the "(" at position ${t.pos}`)
      return value
    }
    if (t.kind === 'name') return this.#name(t)
    throw unexpected(t, 'a number, a name or "("')
  }

  #name(t: Token): number {
    const name = t.text.toLowerCase()
    // Own names only: `constructor`, `__proto__`, `toString` … live on Object.prototype.
    const fn = Object.hasOwn(FUNCTIONS, name) ? FUNCTIONS[name] : undefined
    const isCall = this.#peek().kind === '('
    if (Object.hasOwn(CONSTANTS, name)) {
      if (isCall)
        throw new CalculatorError(`${t.text} at position ${t.pos} is a constant, not a function`)
      return CONSTANTS[name]!
    }
    if (!fn) {
      throw new CalculatorError(
        `unknown name "${t.text}" at position ${t.pos}; known: ${KNOWN_NAMES}`,
      )
    }
    if (!isCall) {
      throw new CalculatorError(`${t.text} at position ${t.pos} is a function; write ${fn.usage}`)
    }
    this.#next()
    const args = [this.#expression()]
    while (this.#peek().kind === ',') {
      this.#next()
      args.push(this.#expression())
    }
    this.#expect(')', `"," or ")" to close ${t.text}(`)
    const [min, max] = fn.arity
    if (args.length < min || args.length > max) {
      throw new CalculatorError(
        `${t.text} at position ${t.pos} got ${args.length} argument${args.length === 1 ? '' : 's'}; ` +
          `usage: ${fn.usage}`,
      )
    }
    return finite(fn.apply(args), t)
  }

  #expect(kind: TokenKind, what: string): void {
    const t = this.#next()
    if (t.kind !== kind) throw unexpected(t, what)
  }
}

function unexpected(t: Token, expected: string): CalculatorError {
  const found = t.kind === 'end' ? 'end of expression' : `"${t.text}"`
  return new CalculatorError(`unexpected ${found} at position ${t.pos}; expected ${expected}`)
}

// Checked after every operation so the message can name where the number stopped being real.
function finite(value: number, t: Token): number {
  if (Number.isNaN(value)) {
    throw new CalculatorError(
      `"${t.text}" at position ${t.pos} has no real result (e.g. sqrt or log of a negative ` +
        'number, or a fractional power of a negative base)',
    )
  }
  if (!Number.isFinite(value)) {
    throw new CalculatorError(
      `overflow: "${t.text}" at position ${t.pos} gives a result beyond ±1.8e308; ` +
        'scale the numbers down or use logarithms',
    )
  }
  return value
}
