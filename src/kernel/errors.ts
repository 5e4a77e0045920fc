/** The kernel's errors, split by whose fault they are (src/errors/, docs/architecture.md#layers). */
export { KernelUsageError } from '../errors/kernel-usage-error'
export { ModelError, type ModelErrorCode } from '../errors/model-error'
