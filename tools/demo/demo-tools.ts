import type { Tool } from '../../src/kernel/tool'
import { queryMetrics } from './query-metrics'
import { readRepoFile } from './read-repo-file'
import { rollbackDeploy } from './rollback-deploy'
import { searchLogs } from './search-logs'

/** The DEMO on-call set: investigate and fix the order service incident on fixture data. */
export const demoTools: readonly Tool[] = [queryMetrics, searchLogs, readRepoFile, rollbackDeploy]
