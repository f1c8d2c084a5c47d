// For tests: an executor factory over the native addon, or undefined (with one line saying what is skipped and how
// to build the addon) when the addon is not built.
import type { Executor } from './api.ts';

export async function nativeFactory(what: string): Promise<((seed: number) => Executor) | undefined> {
  try {
    const mod = await import('./executor.ts');
    const factory = (seed: number) => mod.createExecutor({ seed });
    factory(1).close();
    return factory;
  } catch (e) {
    console.warn(`SKIPPED ${what}: native addon not available (${(e as Error).message.split('\n')[0]}); build it with: node scripts/build.mjs addon`);
    return undefined;
  }
}
