import { ConnectRefused } from '../../runs/connections/connections'
import { errorBody } from '../api-error'

/** Runs `work`; a ConnectRefused becomes its 4xx (or 502) JSON answer. */
export async function refusals<T>(work: () => Promise<T>): Promise<T | Response> {
  try {
    return await work()
  } catch (err) {
    if (!(err instanceof ConnectRefused)) throw err
    return Response.json(errorBody(err.code, err.message), {
      status: err.status,
      headers: { 'Cache-Control': 'no-store' },
    })
  }
}
