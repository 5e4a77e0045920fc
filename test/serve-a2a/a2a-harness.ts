import { exports } from 'cloudflare:workers'
import { Role, type Message, type Part, type SendMessageRequest, type Task } from '@a2a-js/sdk'
import {
  ClientFactory,
  ClientFactoryOptions,
  DefaultAgentCardResolver,
  JsonRpcTransportFactory,
  type Client,
} from '@a2a-js/sdk/client'
import { idFromKey } from '../../src/runs/start'
import { drainAlarms, ORIGIN } from '../service/harness'

/** Tokens of the test Worker (vitest.config.ts): alpha and beta see only their own runs. */
export const ALPHA = { name: 'alpha', token: 'test-alpha-token' }
export const BETA = { name: 'beta', token: 'test-beta-token' }
export const READER = { name: 'reader', token: 'test-reader-token' }

/** The Worker's fetch, with the token as bearer (what an A2A client's auth would add). */
export function fetchAs(token: string | null): typeof fetch {
  return ((input: RequestInfo | URL, init?: RequestInit) => {
    const request = new Request(input, init)
    if (token !== null) request.headers.set('Authorization', `Bearer ${token}`)
    return exports.default.fetch(request)
  }) as typeof fetch
}

/** @a2a-js/sdk's client for the test Worker, from its agent card, calling as `token`. */
export async function clientAs(token: string): Promise<Client> {
  const fetchImpl = fetchAs(token)
  const options = ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
    transports: [new JsonRpcTransportFactory({ fetchImpl })],
    cardResolver: new DefaultAgentCardResolver({ fetchImpl }),
  })
  return new ClientFactory(options).createFromUrl(ORIGIN)
}

let sent = 0

/** A user message: the task as a text part, the skill named in its metadata. */
export function userMessage(text: string, extra: Partial<Message> = {}): Message {
  return {
    messageId: `msg-${Date.now()}-${++sent}-${Math.random().toString(16).slice(2)}`,
    contextId: '',
    taskId: '',
    role: Role.ROLE_USER,
    parts: [textPart(text)],
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
    ...extra,
  }
}

export function textPart(text: string): Part {
  return {
    content: { $case: 'text', value: text },
    metadata: undefined,
    filename: '',
    mediaType: '',
  }
}

/** A SendMessage request for `message`, waiting for the task to settle unless told not to. */
export function sendRequest(
  message: Message,
  options: { returnImmediately?: boolean } = {},
): SendMessageRequest {
  return {
    tenant: '',
    message,
    configuration: {
      acceptedOutputModes: [],
      taskPushNotificationConfig: undefined,
      returnImmediately: options.returnImmediately ?? false,
    },
    metadata: undefined,
  }
}

/** The run a message of `token` starts: its id comes from the message's id (a retry finds it). */
export function runIdOf(caller: { name: string }, message: Message): Promise<string> {
  return idFromKey(`token:${caller.name}:a2a:${message.messageId}`)
}

/**
 * Settles `pending` while running the alarms of run `id` (the test clock holds them: nothing
 * runs by itself), as the platform would while the client waits.
 */
export async function whileRunning<T>(id: string, pending: Promise<T>): Promise<T> {
  let done = false
  const settled = pending.finally(() => (done = true))
  for (let i = 0; i < 2000 && !done; i++) {
    await drainAlarms(id)
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
  return settled
}

/** Sends `message` as `caller` and waits (running its alarms) until its task settles. */
export async function sendSettled(
  client: Client,
  caller: { name: string },
  message: Message,
): Promise<{ id: string; task: Task }> {
  const id = await runIdOf(caller, message)
  const task = (await whileRunning(id, client.sendMessage(sendRequest(message)))) as Task
  // What the run delivers after it settles (its row in the run index) is delivered too.
  await drainAlarms(id)
  return { id, task }
}
