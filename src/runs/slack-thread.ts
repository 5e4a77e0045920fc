import { DurableObject } from 'cloudflare:workers'
import type { ThreadClaim, ThreadRun } from './slack-place'

/**
 * One Durable Object per Slack conversation place (docs/architecture.md#slack): a thread
 * (team, channel, thread ts) or a direct message's top level (team, DM channel). It remembers the
 * runs started there, newest last, so a follow-up finds the run it continues. Claims go through
 * this one object, so two messages at once cannot both continue the same run.
 */
export class SlackThread extends DurableObject {
  /**
   * Records `runId` as the place's latest run and says which run was latest before. Idempotent:
   * claiming the same run again (a Slack retry) answers as the first time.
   */
  async claim(runId: string, now: number, onlyIfKnown = false): Promise<ThreadClaim> {
    const storage = this.ctx.storage
    const earlier = await storage.get<ThreadRun | null>(`claim:${runId}`)
    if (earlier !== undefined) return { previous: earlier, claimed: true }
    const latest = (await storage.get<ThreadRun>('latest')) ?? null
    if (!latest && onlyIfKnown) return { previous: null, claimed: false }
    await storage.put({ [`claim:${runId}`]: latest, latest: { runId, at: now } })
    return { previous: latest, claimed: true }
  }

  /** Undoes a claim that did not start a run (the previous one was still working). */
  async release(runId: string): Promise<void> {
    const storage = this.ctx.storage
    const previous = await storage.get<ThreadRun | null>(`claim:${runId}`)
    if (previous === undefined) return
    const latest = await storage.get<ThreadRun>('latest')
    if (latest?.runId === runId) {
      if (previous) await storage.put('latest', previous)
      else await storage.delete('latest')
    }
    await storage.delete(`claim:${runId}`)
  }

  /**
   * Forgets a deleted run: its claim goes, and if it is the place's latest run only its id stays,
   * marked deleted, so a follow-up is told why the conversation cannot go on. Idempotent.
   */
  async forget(runId: string): Promise<void> {
    const storage = this.ctx.storage
    const latest = await storage.get<ThreadRun>('latest')
    if (latest?.runId === runId && !latest.deleted) {
      await storage.put('latest', { runId, at: latest.at, deleted: true })
    }
    await storage.delete(`claim:${runId}`)
  }

  /** The place's latest run, or null. */
  async latest(): Promise<ThreadRun | null> {
    return (await this.ctx.storage.get<ThreadRun>('latest')) ?? null
  }
}
