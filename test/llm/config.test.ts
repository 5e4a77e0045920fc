import { describe, expect, it } from 'vitest'
import { ConfigError, modelConfigFromEnv } from '../../src/config'
import { createModel } from '../../src/llm/create-model'
import { DEMO_MODEL_NAME } from '../../src/llm/demo-script'
import { OpenAIModel } from '../../src/llm/openai-model'
import { ScriptedModel } from '../../src/llm/scripted-model'
import { FAKE_OPENAI_BASE_URL, FAKE_OPENAI_KEY, reply } from '../fakes/fake-openai'
import { useWire } from '../integration/harness'

describe('modelConfigFromEnv', () => {
  it('has defaults that need no configuration', () => {
    expect(modelConfigFromEnv({})).toEqual({
      baseURL: 'https://api.openai.com/v1',
      model: 'gpt-4o-mini',
      temperature: 0,
      maxTokens: undefined,
      allowlist: ['gpt-4o-mini'],
      protocol: 'auto',
      maxRetries: 3,
      stream: 'auto',
      pricePromptPer1kUsd: undefined,
      priceCompletionPer1kUsd: undefined,
    })
    expect(modelConfigFromEnv({}).apiKey).toBeUndefined()
  })

  it('reads every variable, and keeps the key out of serialized config', () => {
    const config = modelConfigFromEnv({
      OPENAI_BASE_URL: 'http://localhost:11434/v1/',
      OPENAI_API_KEY: ' sk-secret-0123456789 ',
      MODEL: 'llama3.1',
      MODEL_TEMPERATURE: '0.2',
      MODEL_MAX_TOKENS: '1024',
      MODEL_ALLOWLIST: 'qwen2.5, llama3.1,,mistral',
      MODEL_PROTOCOL: 'text',
      MODEL_MAX_RETRIES: '0',
      MODEL_STREAM: 'off',
      PRICE_PROMPT_PER_1K_USD: '0.00015',
      PRICE_COMPLETION_PER_1K_USD: '0',
      PRICE_CACHED_PROMPT_PER_1K_USD: '0.000075',
    })
    expect(config).toMatchObject({
      baseURL: 'http://localhost:11434/v1',
      model: 'llama3.1',
      temperature: 0.2,
      maxTokens: 1024,
      allowlist: ['llama3.1', 'qwen2.5', 'mistral'],
      protocol: 'text',
      maxRetries: 0,
      stream: 'off',
      pricePromptPer1kUsd: 0.00015,
      priceCompletionPer1kUsd: 0,
      priceCachedPromptPer1kUsd: 0.000075,
    })
    expect(config.apiKey).toBe('sk-secret-0123456789')
    expect(JSON.stringify(config)).not.toContain('sk-secret')
  })

  it('treats empty strings as unset', () => {
    expect(
      modelConfigFromEnv({ MODEL: '', OPENAI_API_KEY: '', MODEL_TEMPERATURE: ' ' }),
    ).toMatchObject({
      model: 'gpt-4o-mini',
      temperature: 0,
    })
  })

  it.each([
    ['OPENAI_BASE_URL', 'ftp://files.test/v1', 'http(s) URL'],
    ['OPENAI_BASE_URL', 'api.openai.com/v1', 'http(s) URL'],
    ['MODEL_TEMPERATURE', '2.5', 'from 0 to 2'],
    ['MODEL_TEMPERATURE', '-0.1', 'from 0 to 2'],
    ['MODEL_TEMPERATURE', 'warm', 'from 0 to 2'],
    ['MODEL_MAX_TOKENS', '0', 'an integer >= 1'],
    ['MODEL_MAX_TOKENS', '1.5', 'an integer >= 1'],
    ['MODEL_MAX_TOKENS', '100abc', 'an integer >= 1'],
    ['MODEL_PROTOCOL', 'json', 'auto, native, text'],
    ['MODEL_MAX_RETRIES', '-1', 'an integer from 0 to 10'],
    ['MODEL_MAX_RETRIES', '11', 'an integer from 0 to 10'],
    ['PRICE_PROMPT_PER_1K_USD', '-0.01', 'a number >= 0'],
    ['PRICE_COMPLETION_PER_1K_USD', 'free', 'a number >= 0'],
  ])('%s=%j is rejected naming the variable and what is allowed', (name, value, allowed) => {
    const parse = () => modelConfigFromEnv({ [name]: value })
    expect(parse).toThrow(ConfigError)
    expect(parse).toThrow(name)
    expect(parse).toThrow(allowed)
  })
})

describe('createModel', () => {
  const wire = useWire()

  const withKey = (extra: Record<string, string> = {}) =>
    modelConfigFromEnv({
      OPENAI_BASE_URL: FAKE_OPENAI_BASE_URL,
      OPENAI_API_KEY: FAKE_OPENAI_KEY,
      MODEL: 'gpt-test',
      MODEL_ALLOWLIST: 'gpt-big',
      MODEL_TEMPERATURE: '0.3',
      ...extra,
    })

  it('MODEL=demo gives the offline demo model; no key with another model does not', () => {
    const model = createModel(modelConfigFromEnv({ MODEL: 'demo' }))
    expect(model).toBeInstanceOf(ScriptedModel)
    expect(model.name).toBe(DEMO_MODEL_NAME)
    expect(() => createModel(modelConfigFromEnv({}))).toThrow(/OPENAI_API_KEY/)
  })

  it.each([
    [undefined, 'gpt-test'],
    ['gpt-big', 'gpt-big'],
  ])('with a key and run model %s talks to the provider as %s', async (override, sent) => {
    wire.api.enqueue(reply.text('hello'))
    const model = createModel(withKey(), { model: override })
    expect(model).toBeInstanceOf(OpenAIModel)
    const res = await model.complete({
      protocol: 'text',
      messages: [{ role: 'user', content: 'hi' }],
      timeoutMs: 2_000,
    })
    expect(res.text).toBe('hello')
    expect(wire.api.lastBody()).toMatchObject({ model: sent, temperature: 0.3 })
  })

  it('passes the given fetch to the adapter', async () => {
    let calls = 0
    wire.api.enqueue(reply.text('hello'))
    const model = createModel(withKey(), { fetch: (input, init) => (calls++, fetch(input, init)) })
    await model.complete({
      protocol: 'text',
      messages: [{ role: 'user', content: 'hi' }],
      timeoutMs: 2_000,
    })
    expect(calls).toBe(1)
  })

  it.each([[withKey()], [modelConfigFromEnv({ MODEL_ALLOWLIST: 'gpt-big' })]])(
    'a run model outside the allowlist is refused, naming the allowed ones',
    (config) => {
      expect(() => createModel(config, { model: 'gpt-huge' })).toThrow(TypeError)
      expect(() => createModel(config, { model: 'gpt-huge' })).toThrow(/gpt-huge.*gpt-big/)
    },
  )
})
