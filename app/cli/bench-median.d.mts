// Types of bench-median.mjs (plain .mjs: the CLI runs without a build step).
export type BenchRun = Record<string, unknown>;
export interface Spread { min: number; max: number; values: number[] }
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export function medianOfRuns(samples: BenchRun[]): Record<string, any> & { runs?: number; spread?: Record<string, Spread> };
