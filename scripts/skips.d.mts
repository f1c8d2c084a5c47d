export interface AllowedSkip { suite: 'cpp' | 'vitest' | 'e2e'; test: RegExp; reason: string }
export const ALLOWED_SKIPS: readonly AllowedSkip[];
export function judgeSkips(suite: string, ids: readonly string[]): { allowed: { id: string; reason: string }[]; unexpected: string[] };
export function vitestSkipped(report: unknown, root: string): string[];
export function playwrightSkipped(report: unknown): string[];
export function gtestSkipped(data: unknown): string[];
