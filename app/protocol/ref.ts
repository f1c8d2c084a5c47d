// Scenario references ("$mrA.rkey^0x01"): the syntax is described in scenario.ts. Its own module so that code the
// descriptors import (the C emitters) can parse references without importing the scenario schemas.

export const REF_RE = /^\$([A-Za-z][A-Za-z0-9_]{0,31})\.([A-Za-z][A-Za-z0-9]{0,31})(?:([+\-^])(0x[0-9a-fA-F]{1,14}|[0-9]{1,16}))?$/;

export interface Ref { name: string; field: string; op?: '+' | '-' | '^'; operand?: bigint }
export function parseRef(s: string): Ref | null {
  const m = REF_RE.exec(s);
  if (!m) return null;
  const r: Ref = { name: m[1]!, field: m[2]! };
  if (m[3]) { r.op = m[3] as Ref['op']; r.operand = BigInt(m[4]!); }
  return r;
}
