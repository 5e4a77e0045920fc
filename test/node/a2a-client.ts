/** @a2a-js/sdk's client as the node tests use it: a bearer token, and one-text messages. */
import { Role } from '@a2a-js/sdk'
import {
  ClientFactory,
  ClientFactoryOptions,
  DefaultAgentCardResolver,
  JsonRpcTransportFactory,
} from '@a2a-js/sdk/client'

/** The SDK's client for the Worker at `base`, sending `token` on every request (the card too). */
export async function a2aClient(base: string, token: string) {
  const fetchImpl: typeof fetch = (input, init) => {
    const request = new Request(input, init)
    request.headers.set('Authorization', `Bearer ${token}`)
    return fetch(request)
  }
  const options = ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
    transports: [new JsonRpcTransportFactory({ fetchImpl })],
    cardResolver: new DefaultAgentCardResolver({ fetchImpl }),
  })
  return new ClientFactory(options).createFromUrl(base.replace(/\/$/, ''))
}

/** An A2A `SendMessage` request of one text part, as the SDK's client takes it. */
export function a2aMessage(text: string, metadata?: Record<string, unknown>) {
  return {
    tenant: '',
    message: {
      messageId: crypto.randomUUID(),
      contextId: '',
      taskId: '',
      role: Role.ROLE_USER,
      parts: [
        {
          content: { $case: 'text' as const, value: text },
          metadata: undefined,
          filename: '',
          mediaType: 'text/plain',
        },
      ],
      metadata,
      extensions: [],
      referenceTaskIds: [],
    },
    configuration: undefined,
    metadata: undefined,
  }
}
