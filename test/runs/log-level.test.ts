/** LOG_LEVEL decides which structured lines the Worker writes (docs/configuration.md). */
import { afterEach, describe, expect, it, vi } from 'vitest'
import { ConfigError, loadConfig } from '../../src/config/index'
import { logEvent } from '../../src/runs/log'

afterEach(() => {
  vi.restoreAllMocks()
})

function written(level: string | undefined): string[] {
  const spy = vi.spyOn(console, 'log').mockImplementation(() => {})
  const env = level === undefined ? {} : { LOG_LEVEL: level }
  logEvent(env, 'run_started', { runId: 'run_1' })
  logEvent(env, 'delivery_failed', { runId: 'run_1' }, 'warn')
  logEvent(env, 'run_slice_failed', { runId: 'run_1' }, 'error')
  return spy.mock.calls.map((args) => (JSON.parse(String(args[0])) as { msg: string }).msg)
}

describe('LOG_LEVEL', () => {
  it.each([
    [undefined, ['run_started', 'delivery_failed', 'run_slice_failed']],
    ['debug', ['run_started', 'delivery_failed', 'run_slice_failed']],
    ['info', ['run_started', 'delivery_failed', 'run_slice_failed']],
    ['warn', ['delivery_failed', 'run_slice_failed']],
    ['error', ['run_slice_failed']],
    ['silent', []],
    // Unreadable: logged as info, so the error that reports it is not hidden too.
    ['loud', ['run_started', 'delivery_failed', 'run_slice_failed']],
  ])('%s writes %j', (level, msgs) => {
    expect(written(level)).toEqual(msgs)
  })

  it('each line says its level', () => {
    const spy = vi.spyOn(console, 'log').mockImplementation(() => {})
    logEvent({}, 'delivery_failed', { runId: 'run_1' }, 'warn')
    expect(JSON.parse(String(spy.mock.calls[0]![0]))).toEqual({
      level: 'warn',
      msg: 'delivery_failed',
      runId: 'run_1',
    })
  })

  it('an unknown level is a configuration error that names the variable', () => {
    const env = { LOG_LEVEL: 'loud' }
    expect(() => loadConfig(env)).toThrow(ConfigError)
    expect(() => loadConfig(env)).toThrow(
      'LOG_LEVEL must be one of debug, info, warn, error, silent',
    )
  })
})
