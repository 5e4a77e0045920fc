/** Types of kernel-vs-ai-sdk.mjs, for test/node. */
export function prototypeLine(
  p: number | undefined,
  k: number,
  a: number | undefined,
  all: number[],
): string
export function benchKernelVsAiSdk(root: string): Promise<string>
