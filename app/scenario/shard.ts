// Shards of a headless run (`verbslab run --shard I/N`, `verbslab lab run all --shard I/N`): each file goes to the
// shard its path hashes to (FNV-1a of the path relative to the repository, mod N), so a file's shard does not depend
// on which other files exist or on their order; every file is in exactly one shard. Each shard writes its own JUnit
// report; mergeJunit joins them into one (`verbslab junit-merge OUT IN...`).
import fs from 'node:fs';
import path from 'node:path';
import { REPO_ROOT } from './library.ts';

export interface Shard { index: number; count: number }

/** "I/N" (1 <= I <= N <= 1000), or a readable error. */
export function parseShard(s: string): Shard {
  const m = /^(\d{1,4})\/(\d{1,4})$/.exec(s);
  const index = m ? Number(m[1]) : NaN, count = m ? Number(m[2]) : NaN;
  if (!m || count < 1 || count > 1000 || index < 1 || index > count) throw new Error(`--shard: expected I/N with 1 <= I <= N <= 1000, got "${s}"`);
  return { index, count };
}

/** FNV-1a (32 bits) of a string's UTF-16 code units */
function fnv1a(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) { h ^= s.charCodeAt(i); h = Math.imul(h, 0x01000193) >>> 0; }
  return h;
}

/** The 1-based shard of a file (its path relative to the repository, with / separators). */
export function shardOf(file: string, count: number): number {
  const rel = path.relative(REPO_ROOT, path.resolve(file)).split(path.sep).join('/');
  return (fnv1a(rel) % count) + 1;
}

/** The files of one shard, in their given order. */
export function inShard<T>(items: readonly T[], shard: Shard | undefined, fileOf: (t: T) => string): T[] {
  return shard ? items.filter((t) => shardOf(fileOf(t), shard.count) === shard.index) : [...items];
}

/** One JUnit report from several (the shards'): their <testsuite> elements under one <testsuites> with the sums. */
export function mergeJunit(texts: readonly string[], name: string): string {
  const suites: string[] = [];
  let tests = 0, failures = 0;
  for (const t of texts) {
    const head = /<testsuites\b[^>]*\btests="(\d+)"[^>]*\bfailures="(\d+)"/.exec(t);
    if (!head) throw new Error('not a JUnit report of verbslab (no <testsuites tests= failures=>)');
    tests += Number(head[1]); failures += Number(head[2]);
    for (const m of t.matchAll(/^ *<testsuite\b[\s\S]*?<\/testsuite>/gm)) suites.push(m[0]);
  }
  return ['<?xml version="1.0" encoding="UTF-8"?>', `<testsuites name="${name}" tests="${tests}" failures="${failures}">`, ...suites, '</testsuites>', ''].join('\n');
}

/** `verbslab junit-merge OUT IN...` */
export function mergeJunitFiles(out: string, inputs: readonly string[]): void {
  const texts = inputs.map((f) => fs.readFileSync(f, 'utf8'));
  const name = /<testsuites\b[^>]*\bname="([^"]*)"/.exec(texts[0] ?? '')?.[1] ?? 'verbslab';
  fs.writeFileSync(out, mergeJunit(texts, name));
}
