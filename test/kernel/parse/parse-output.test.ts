import { describe, expect, it } from 'vitest'
import {
  FINISH,
  TEXT_PROTOCOL_FORMAT,
  UNPARSABLE,
  parseOutput,
  type ParsedOutput,
} from '../../../src/kernel/parse/index'
import { scanObjects } from '../../../src/kernel/parse/json-scan'
import { ADVERSARIAL } from '../../fixtures/adversarial-replies'

// Speed is measured in `npm run bench -- kernel` (its goals fail the command), not timed here.

const withoutFamily = ({ family: _family, ...rest }: ParsedOutput) => rest
const fence = (json: string) => '```json\n' + json + '\n```'
const unparsable = (thought: string): ParsedOutput => ({
  thought,
  call: { name: UNPARSABLE, args: {} },
})

describe('parseOutput', () => {
  it.each<[string, string, ParsedOutput]>([
    // JSON blocks
    [
      'fenced json block',
      'I should search.\n' + fence('{"action": "search", "args": {"q": "cats"}}'),
      { thought: 'I should search.', call: { name: 'search', args: { q: 'cats' } } },
    ],
    [
      'fence without language',
      'Look it up.\n```\n{"action": "search", "args": {"q": "x"}}\n```',
      { thought: 'Look it up.', call: { name: 'search', args: { q: 'x' } } },
    ],
    [
      'bare JSON in prose',
      'Let me call {"action": "search", "args": {"q": "x"}} now.',
      { thought: 'Let me call', call: { name: 'search', args: { q: 'x' } } },
    ],
    [
      'nested args',
      '{"action": "put", "args": {"item": {"tags": ["a", "b"], "meta": {"n": 1}}}}',
      {
        thought: '',
        call: { name: 'put', args: { item: { tags: ['a', 'b'], meta: { n: 1 } } } },
      },
    ],
    [
      'thought key used when no prose',
      fence('{"thought": "need data", "action": "search", "args": {"q": "x"}}'),
      { thought: 'need data', call: { name: 'search', args: { q: 'x' } } },
    ],
    [
      'prose beats thought key',
      'Prose first.\n{"thought": "in json", "action": "search", "args": {}}',
      { thought: 'Prose first.', call: { name: 'search', args: {} } },
    ],
    [
      'Thought: label stripped before JSON',
      'Thought: check the weather\n' + fence('{"action": "weather", "args": {"city": "Oslo"}}'),
      { thought: 'check the weather', call: { name: 'weather', args: { city: 'Oslo' } } },
    ],
    // key aliases
    ...(['action', 'tool', 'name', 'tool_name', 'function'] as const).map(
      (key): [string, string, ParsedOutput] => [
        `action key "${key}"`,
        `{"${key}": "search", "args": {"q": "x"}}`,
        { thought: '', call: { name: 'search', args: { q: 'x' } } },
      ],
    ),
    ...(['args', 'arguments', 'parameters', 'input', 'action_input', 'tool_input'] as const).map(
      (key): [string, string, ParsedOutput] => [
        `args key "${key}"`,
        `{"action": "search", "${key}": {"q": "x"}}`,
        { thought: '', call: { name: 'search', args: { q: 'x' } } },
      ],
    ),
    [
      'args as a JSON string',
      '{"action": "search", "arguments": "{\\"q\\": \\"x\\"}"}',
      { thought: '', call: { name: 'search', args: { q: 'x' } } },
    ],
    [
      'args as plain text',
      '{"action": "search", "action_input": "cats and dogs"}',
      { thought: '', call: { name: 'search', args: { _raw: 'cats and dogs' } } },
    ],
    [
      'args as an array',
      '{"action": "sum", "args": [1, 2]}',
      { thought: '', call: { name: 'sum', args: { _raw: [1, 2] } } },
    ],
    ['missing args', '{"action": "now"}', { thought: '', call: { name: 'now', args: {} } }],
    [
      'OpenAI-style function object',
      '{"type": "function", "function": {"name": "search", "arguments": "{\\"q\\": \\"x\\"}"}}',
      { thought: '', call: { name: 'search', args: { q: 'x' } } },
    ],
    // several objects, string-aware scanning
    [
      'first object without an action is skipped',
      'Data: {"q": "x"}\n{"action": "search", "args": {"q": "y"}}\n{"action": "other"}',
      { thought: 'Data: {"q": "x"}', call: { name: 'search', args: { q: 'y' } } },
    ],
    [
      'braces inside JSON strings',
      '{"action": "echo", "args": {"text": "a } b { c \\" }"}}',
      { thought: '', call: { name: 'echo', args: { text: 'a } b { c " }' } } },
    ],
    [
      'braces in the thought prose',
      'I think {x} matters and { this too.\n{"action": "search", "args": {"q": "x"}}',
      {
        thought: 'I think {x} matters and { this too.',
        call: { name: 'search', args: { q: 'x' } },
      },
    ],
    [
      'action name that is not a string is skipped',
      '{"action": 42, "args": {}} then {"action": "search", "args": {}}',
      { thought: '{"action": 42, "args": {}} then', call: { name: 'search', args: {} } },
    ],
    [
      'repaired JSON is flagged',
      "{'action': 'search', 'args': {'q': 'x', 'exact': True,},}",
      { thought: '', call: { name: 'search', args: { q: 'x', exact: true }, repaired: true } },
    ],
    // tool_call tags
    [
      'Hermes/Qwen <tool_call> tag',
      'Checking.\n<tool_call>\n{"name": "weather", "arguments": {"city": "Oslo"}}\n</tool_call>',
      { thought: 'Checking.', call: { name: 'weather', args: { city: 'Oslo' } } },
    ],
    // ReAct
    [
      'ReAct with JSON input',
      'Thought: I need facts\nAction: search\nAction Input: {"q": "cats"}',
      { thought: 'I need facts', call: { name: 'search', args: { q: 'cats' } } },
    ],
    [
      'ReAct input whose keys look like an action',
      'Thought: add user\nAction: create_user\nAction Input: {"name": "Bob"}',
      { thought: 'add user', call: { name: 'create_user', args: { name: 'Bob' } } },
    ],
    [
      'ReAct with plain text input',
      'Thought: look\nAction: search\nAction Input: cats and dogs\nObservation: made up',
      { thought: 'look', call: { name: 'search', args: { _raw: 'cats and dogs' } } },
    ],
    [
      'ReAct with multi-line fenced input',
      'Thought: t\nAction: search\nAction Input:\n```json\n{\n  "q": "x"\n}\n```',
      { thought: 't', call: { name: 'search', args: { q: 'x' } } },
    ],
    [
      'ReAct without input',
      'Thought: what time is it\nAction: now',
      { thought: 'what time is it', call: { name: 'now', args: {} } },
    ],
    [
      'ReAct name(args)',
      'Thought: t\nAction: search({"q": "x"})',
      { thought: 't', call: { name: 'search', args: { q: 'x' } } },
    ],
    [
      'ReAct name()',
      'Thought: t\nAction: now()',
      { thought: 't', call: { name: 'now', args: {} } },
    ],
    [
      'ReAct name("text")',
      'Action: search("cats")',
      { thought: '', call: { name: 'search', args: { _raw: 'cats' } } },
    ],
    [
      'ReAct action with a JSON block (LangChain)',
      'Thought: t\nAction:\n' + fence('{"action": "search", "action_input": "cats"}'),
      { thought: 't', call: { name: 'search', args: { _raw: 'cats' } } },
    ],
    [
      'ReAct Action: Final Answer',
      'Thought: done\nAction: Final Answer\nAction Input: Paris',
      { thought: 'done', call: { name: FINISH, args: { answer: 'Paris' } } },
    ],
    // finishing
    [
      'Final Answer: multi-line',
      'Thought: I know it\nFinal Answer:  Paris\nis the capital.  \n',
      { thought: 'I know it', call: { name: FINISH, args: { answer: 'Paris\nis the capital.' } } },
    ],
    [
      'Final Answer with braces in it',
      'Final Answer: use {"action": "x"} literally',
      { thought: '', call: { name: FINISH, args: { answer: 'use {"action": "x"} literally' } } },
    ],
    [
      'JSON finish',
      fence('{"thought": "done", "action": "finish", "args": {"answer": "42"}}'),
      { thought: 'done', call: { name: FINISH, args: { answer: '42' } } },
    ],
    [
      'JSON final_answer action',
      '{"action": "final_answer", "args": {"answer": "yes"}}',
      { thought: '', call: { name: FINISH, args: { answer: 'yes' } } },
    ],
    [
      'JSON "Final Answer" with a string input (LangChain)',
      '{"action": "Final Answer", "action_input": "Paris"}',
      { thought: '', call: { name: FINISH, args: { answer: 'Paris' } } },
    ],
    [
      'JSON final_answer key',
      '{"final_answer": "Paris"}',
      { thought: '', call: { name: FINISH, args: { answer: 'Paris' } } },
    ],
    [
      'non-string answer becomes a string',
      '{"action": "finish", "args": {"answer": {"n": 1}}}',
      { thought: '', call: { name: FINISH, args: { answer: '{"n":1}' } } },
    ],
    [
      'earliest action wins over a later Final Answer',
      '{"action": "search", "args": {}}\nObservation: x\nFinal Answer: guessed',
      { thought: '', call: { name: 'search', args: {} } },
    ],
    // failures
    ['empty', '', unparsable('')],
    ['whitespace only', '  \n ', unparsable('')],
    ['prose only', '  I am not sure what to do.  ', unparsable('I am not sure what to do.')],
    [
      'unbalanced braces',
      '{"action": "search", "args": {"q": "x"}',
      unparsable('{"action": "search", "args": {"q": "x"}'),
    ],
    [
      'cut-off object whose args look like an action',
      '{"action": "create_user", "args": {"name": "Bob"}',
      unparsable('{"action": "create_user", "args": {"name": "Bob"}'),
    ],
    ['JSON array only', '[{"x": 1}, 2]', unparsable('[{"x": 1}, 2]')],
    ['action not a string', '{"action": ["search"]}', unparsable('{"action": ["search"]}')],
    ['action null', '{"action": null, "args": {}}', unparsable('{"action": null, "args": {}}')],
    ['empty action name', '{"action": " "}', unparsable('{"action": " "}')],
    ['object without action', '{"q": "x"}', unparsable('{"q": "x"}')],
    [
      'Action line that is prose',
      'Action: I will search the web',
      unparsable('Action: I will search the web'),
    ],
  ])('%s', (_name, text, expected) => {
    expect(withoutFamily(parseOutput(text))).toEqual(expected)
  })

  it('parses a megabyte of brace-heavy prose quickly', () => {
    const prose = 'I think {x} matters, { maybe "quoted" }, and } stray. '.repeat(20_000)
    const text = prose + fence('{"action": "search", "args": {"q": "x"}}')
    expect(text.length).toBeGreaterThan(1_000_000)
    expect(parseOutput(text).call).toEqual({ name: 'search', args: { q: 'x' } })
    expect(scanObjects(text).work).toBeLessThanOrEqual(3 * text.length)
  })

  it('parses a megabyte of unclosed braces quickly', () => {
    const text = '{"a": '.repeat(200_000)
    expect(parseOutput(text).call.name).toBe(UNPARSABLE)
    expect(scanObjects(text).work).toBeLessThanOrEqual(3 * text.length)
  })
})

describe('parseOutput on the exact requested format (its fast path)', () => {
  // A reply that is exactly one fenced object is read with one JSON.parse; the same object bare
  // goes through the general scan. Both must read the same.
  it.each([
    '{"thought": "read page 3", "action": "fetch_page", "args": {"page": 3}}',
    '{"thought": "done", "action": "finish", "args": {"answer": "all read"}}',
    '{"action": "Final Answer", "args": {"answer": "42"}}',
    '{"final_answer": "just this"}',
    '{"reasoning": "r", "tool": "search", "arguments": "{\\"q\\": \\"x\\"}"}',
    '{"function": {"name": "search", "arguments": {"q": "x"}}}',
    '{"thought": "t", "action": "search", "args": ["a", "b"]}',
    '{"thought": "t", "action": "search", "args": "plain words"}',
    '{"thought": "braces } { and ``` in a string", "action": "search", "args": {}}',
    '  {"action": "search", "args": {"q": "padded"}}  ',
  ])('%s', (body) => {
    expect(parseOutput(fence(body))).toEqual(parseOutput(body))
    expect(parseOutput(`\n ${fence(body)}\n`)).toEqual(parseOutput(body))
  })

  it('leaves two objects, trailing text, repairs and non-actions to the general path', () => {
    for (const body of [
      '{"thought": "no action here", "args": {"q": "x"}}',
      '{"thought": "t", "action": "", "args": {}}',
    ]) {
      expect(parseOutput(fence(body))).toEqual(unparsable(fence(body)))
    }
    // An escaped key is the same key once decoded; the general path reads it.
    expect(parseOutput(fence('{"\\u0061ction": "search", "args": {"q": "x"}}')).call).toEqual({
      name: 'search',
      args: { q: 'x' },
    })
    expect(
      parseOutput(fence('{"action": "a", "args": {}} {"action": "b", "args": {}}')).call,
    ).toEqual({ name: 'a', args: {} })
    expect(parseOutput(fence("{'action': 'search', 'args': {'q': 'x'}}")).call).toEqual({
      name: 'search',
      args: { q: 'x' },
      repaired: true,
    })
    expect(
      parseOutput(fence('{"action": "search", "args": {}}') + '\nFinal Answer: no').call.name,
    ).toBe('search')
  })
})

describe('TEXT_PROTOCOL_FORMAT', () => {
  it('shows a tool call and a finish that parseOutput reads back', () => {
    const blocks = [...TEXT_PROTOCOL_FORMAT.matchAll(/```json\n([\s\S]*?)\n```/g)].map((m) => m[1]!)
    expect(blocks).toHaveLength(2)
    const filled = blocks.map((b) => b.replace('{<tool arguments>}', '{"q": "x"}'))
    expect(parseOutput(filled[0]!).call).toEqual({ name: '<tool name>', args: { q: 'x' } })
    expect(parseOutput(filled[1]!).call).toEqual({
      name: FINISH,
      args: { answer: '<final answer>' },
    })
  })
})

describe('parseOutput names the family it read', () => {
  it.each<[string, string, string]>([
    ['json', '{"action": "search", "args": {}}', 'search'],
    ['hermes', '<tool_call>\n{"name": "search", "arguments": {}}\n</tool_call>', 'search'],
    ['qwen3-coder', '<tool_call>\n<function=search>\n</function>\n</tool_call>', 'search'],
    ['glm', '<tool_call>search\n</tool_call>', 'search'],
    ['llama', '<|python_tag|>{"name": "search", "parameters": {}}', 'search'],
    ['mistral', '[TOOL_CALLS]search{}', 'search'],
    ['deepseek', '<｜tool▁call▁begin｜>search<｜tool▁sep｜>{}<｜tool▁call▁end｜>', 'search'],
    ['kimi', '<|tool_call_begin|>functions.search:0<|tool_call_argument_begin|>{}', 'search'],
    ['harmony', '<|channel|>commentary to=functions.search<|message|>{}<|call|>', 'search'],
    ['xml', '<invoke name="search"></invoke>', 'search'],
    ['react', 'Action: search\nAction Input: {}', 'search'],
    ['python', 'search()', 'search'],
  ])('%s', (family, text, name) => {
    const out = parseOutput(text)
    expect(out.call.name).toBe(name)
    expect(out.family).toBe(family)
  })

  it('keeps the thought from a think block and the prose before the call', () => {
    const out = parseOutput('<think>plan {a}</think>\nI will look.\n[TOOL_CALLS]search{"q": "x"}')
    expect(out).toEqual({
      thought: 'plan {a}\nI will look.',
      call: { name: 'search', args: { q: 'x' } },
      family: 'mistral',
    })
  })

  it('flags repaired arguments, and not Python syntax in a Python-style call', () => {
    expect(parseOutput("{'action': 'a', 'args': {}}").call.repaired).toBe(true)
    expect(parseOutput("lookup(q='x', exact=True)").call).toEqual({
      name: 'lookup',
      args: { q: 'x', exact: true },
    })
  })

  // Their speed is a benchmark goal (bench/parse.bench.ts reads the same inputs).
  it.each(ADVERSARIAL)('reads no call from %s', (_name, text) => {
    expect(parseOutput(text).call.name).toBe(UNPARSABLE)
  })
})
