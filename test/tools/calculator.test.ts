import { describe, expect, it } from 'vitest'
import { calculator } from '../../tools/calculator'
import { call, contextFor } from './dispatch-context'

const ctx = contextFor([calculator])
const calc = (expression: string) => call(ctx, 'calculator', { expression })

describe('calculator', () => {
  it('echoes the expression with its value', async () => {
    expect(await calc('2 + 3 * 4')).toBe('2 + 3 * 4 = 14')
  })

  it.each([
    ['(2 + 3) * 4', '20'],
    ['2^3^2', '512'], // right-associative
    ['-2^2', '-4'], // unary minus binds looser than ^
    ['2^-1', '0.5'],
    ['2 ** 10', '1024'],
    ['--3', '3'],
    ['10 - 4 - 3', '3'], // left-associative
    ['1e3 / 4', '250'],
    ['1.5E-3 * 2', '0.003'],
    ['.5 + 1.25', '1.75'],
    ['10 % 4', '2'],
    ['0.1 + 0.2', '0.3'],
    ['sqrt(16) + abs(-3)', '7'],
    ['min(4, 2, 8) * max(1, 5)', '10'],
    ['round(3.14159, 2) + round(2.5)', '6.14'],
    ['floor(2.7) + ceil(2.1)', '5'],
    ['pow(2, 10)', '1024'],
    ['log(1000) + log(8, 2)', '6'],
    ['ln(e) + exp(0)', '2'],
    ['2 * PI', '6.28318530718'],
    ['  (1200 - 950)  / 950 * 100 ', '26.3157894737'],
  ])('%s = %s', async (expression, value) => {
    expect(await calc(expression)).toBe(`${expression.trim().replace(/\s+/g, ' ')} = ${value}`)
  })

  it('allows nesting up to 50 levels', async () => {
    const nested = `${'('.repeat(49)}1${')'.repeat(49)}`
    expect(await calc(nested)).toBe(`${nested} = 1`)
  })

  it.each([
    ['1 / 0', 'division by zero: the right side of "/" at position 3 is 0'],
    ['5 % (2 - 2)', 'division by zero: the right side of "%" at position 3 is 0'],
    ['10^400', 'overflow: "^" at position 3'],
    ['exp(1000)', 'overflow: "exp" at position 1'],
    ['sqrt(-1)', '"sqrt" at position 1 has no real result'],
    [`${'('.repeat(50)}1${')'.repeat(50)}`, 'nests deeper than 50 levels'],
    ['-'.repeat(60) + '1', 'nests deeper than 50 levels'],
    ['1+'.repeat(500) + '1', 'expression is 1001 characters; the limit is 1000'],
    ['foo(2)', 'unknown name "foo" at position 1; known: constants pi, e; functions round'],
    ['2 + x', 'unknown name "x" at position 5'],
    ['2 + * 3', 'unexpected "*" at position 5; expected a number, a name or "("'],
    [
      '(1 + 2',
      'unexpected end of expression at position 7; expected ")" to close the "(" at position 1',
    ],
    ['1 2', 'unexpected "2" at position 3; expected an operator or the end of the expression'],
    ['2)', 'unexpected ")" at position 2'],
    ['sqrt(1, 2)', 'sqrt at position 1 got 2 arguments; usage: sqrt(x)'],
    ['pow(2)', 'pow at position 1 got 1 argument; usage: pow(base, exponent)'],
    ['round(1.5, 0.5)', 'round: digits must be a whole number from 0 to 15'],
    ['2 $ 3', 'unexpected character "$" at position 3'],
    ['1e + 2', 'malformed number "1e" at position 1'],
    ['1.2.3', 'malformed number "1.2.3" at position 1'],
    ['   ', 'empty expression'],
    ['pi(2)', 'pi at position 1 is a constant, not a function'],
    ['sqrt + 1', 'sqrt at position 1 is a function; write sqrt(x)'],
  ])('refuses %j', async (expression, message) => {
    const observation = await calc(expression)
    expect(observation).toMatch(/^\[ToolError\] calculator failed: CalculatorError: /)
    expect(observation).toContain(message)
  })

  it('rejects a non-string expression before running', async () => {
    expect(await call(ctx, 'calculator', { expression: 42 })).toContain(
      'invalid arguments for calculator:\n- expression: expected string, got number',
    )
  })
})
