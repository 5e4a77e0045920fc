import * as z from 'zod/mini'
import { defineTool } from '../src/kernel/tool'
import { evaluate, MAX_EXPRESSION_LENGTH } from './calculator-parser'

/**
 * Exact arithmetic for the model, which is bad at it. The result echoes the expression
 * (`"2 + 3 * 4 = 14"`) so that several calculations in one step stay tied to their answers.
 */
export const calculator = defineTool({
  name: 'calculator',
  description:
    'Evaluate an arithmetic expression exactly. Use it for any arithmetic instead of computing ' +
    'in your head. Supports numbers (42, 3.14, 1e3), + - * / % (remainder), ^ (power, ' +
    'right-associative; ** also works), parentheses, unary minus, the constants pi and e, and ' +
    'the functions round(x) or round(x, digits), sqrt, abs, floor, ceil, min(a, b, ...), ' +
    'max(a, b, ...), pow(base, exponent), log(x) (base 10) or log(x, base), ln (natural log), exp. ' +
    'No variables, units or percent signs: write 12% of 250 as 0.12 * 250.',
  params: z.object({
    expression: z
      .string()
      .check(
        z.describe(
          `The expression, at most ${MAX_EXPRESSION_LENGTH} characters, e.g. "(1200 - 950) / 950 * 100"`,
        ),
      ),
  }),
  returns:
    'The expression and its value, e.g. "2 + 3 * 4 = 14" (rounded to 12 significant digits).',
  handler: ({ expression }) => {
    const value = evaluate(expression)
    return `${expression.trim().replace(/\s+/g, ' ')} = ${formatNumber(value)}`
  },
})

// 12 significant digits hide binary floating-point noise (0.1 + 0.2 = 0.3) without hiding
// anything a person would call a real digit.
function formatNumber(value: number): string {
  const rounded = Number(value.toPrecision(12))
  return String(Object.is(rounded, -0) ? 0 : rounded)
}
