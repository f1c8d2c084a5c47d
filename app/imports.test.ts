// The platform does not import its plug-ins: no file of app/ or renderer/src/ imports labs/ except the composition
// roots, each through its generated index (scripts/gen-labs.ts); no import circle (type-only imports included) runs
// through both the platform and a lab; the protocol layer imports neither the C exporter nor the host. Read from
// the sources with the TypeScript parser (imports, re-exports and import() calls of every non-test module).
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const rel = (f: string) => path.relative(root, f).split(path.sep).join('/');
const isTest = (f: string) => /\.(test|spec)\.tsx?$|\.d\.m?ts$|\/__tests__\//.test(f);

/** The composition roots: the only platform files that import labs/, and the generated index each reads. */
const ROOTS: Record<string, string> = {
  'app/protocol/labs.ts': 'labs/index.generated.ts',          // commands, object kinds, enums, decoders
  'app/scenario/export-c.ts': 'labs/c.generated.ts',          // the C emitters of the lab commands
  'app/host/commands/index.ts': 'labs/handlers.generated.ts', // the executor's handlers of the lab commands
  'app/host/main.ts': 'labs/extensions.generated.ts',         // the labs' host extensions
  'renderer/src/panels/labs.ts': 'labs/panels.generated.ts',  // the labs' console panels
};

function sources(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) { if (e.name !== 'node_modules' && !e.name.startsWith('.')) walk(p); } else if (/\.(ts|tsx|mts)$/.test(e.name) && !isTest(rel(p))) out.push(p);
    }
  };
  walk(path.join(root, dir));
  return out;
}

/** module -> the modules it imports (relative specifiers that resolve to a file) */
function graph(): Map<string, string[]> {
  const g = new Map<string, string[]>();
  for (const f of ['app', 'labs', 'renderer/src'].flatMap(sources)) {
    const sf = ts.createSourceFile(f, fs.readFileSync(f, 'utf8'), ts.ScriptTarget.Latest, false);
    const specs: string[] = [];
    const visit = (n: ts.Node) => {
      if ((ts.isImportDeclaration(n) || ts.isExportDeclaration(n)) && n.moduleSpecifier && ts.isStringLiteral(n.moduleSpecifier)) specs.push(n.moduleSpecifier.text);
      else if (ts.isCallExpression(n) && n.expression.kind === ts.SyntaxKind.ImportKeyword && n.arguments[0] && ts.isStringLiteral(n.arguments[0])) specs.push(n.arguments[0].text);
      else if (ts.isImportTypeNode(n) && ts.isLiteralTypeNode(n.argument) && ts.isStringLiteral(n.argument.literal)) specs.push(n.argument.literal.text);
      ts.forEachChild(n, visit);
    };
    visit(sf);
    g.set(rel(f), specs.filter((s) => s.startsWith('.')).map((s) => rel(path.resolve(path.dirname(f), s))).filter((p) => fs.existsSync(path.join(root, p))));
  }
  return g;
}

/** strongly connected components of more than one module (Tarjan) */
function circles(g: Map<string, string[]>): string[][] {
  let n = 0; const stack: string[] = []; const on = new Set<string>(); const idx = new Map<string, number>(); const low = new Map<string, number>(); const out: string[][] = [];
  const visit = (v: string) => {
    idx.set(v, n); low.set(v, n); n++; stack.push(v); on.add(v);
    for (const w of g.get(v) ?? []) {
      if (!idx.has(w)) { visit(w); low.set(v, Math.min(low.get(v)!, low.get(w)!)); } else if (on.has(w)) low.set(v, Math.min(low.get(v)!, idx.get(w)!));
    }
    if (low.get(v) === idx.get(v)) { const c: string[] = []; let w: string; do { w = stack.pop()!; on.delete(w); c.push(w); } while (w !== v); if (c.length > 1) out.push(c.sort()); }
  };
  for (const v of g.keys()) if (!idx.has(v)) visit(v);
  return out;
}

const g = graph();
const platform = (f: string) => f.startsWith('app/') || f.startsWith('renderer/src/');

describe('imports between the platform and the labs', () => {
  it('reads the sources (the check cannot pass on nothing)', () => {
    expect(g.size).toBeGreaterThan(100);
    expect(g.get('app/protocol/labs.ts')).toContain('labs/index.generated.ts');
  });

  it('no platform module imports labs/ except the composition roots, each through its generated index', () => {
    const bad: string[] = [];
    for (const [f, deps] of g) {
      if (!platform(f)) continue;
      for (const d of deps.filter((x) => x.startsWith('labs/'))) if (ROOTS[f] !== d) bad.push(`${f} -> ${d}`);
    }
    expect(bad).toEqual([]);
  });

  it('no import circle runs through both the platform and a lab', () => {
    const mixed = circles(g).filter((c) => c.some(platform) && c.some((f) => f.startsWith('labs/')));
    expect(mixed.map((c) => c.join(' '))).toEqual([]);
  });

  it('the protocol layer imports neither the C exporter nor the host', () => {
    const bad = [...g].filter(([f]) => f.startsWith('app/protocol/'))
      .flatMap(([f, deps]) => deps.filter((d) => d.startsWith('app/scenario/export-c') || d.startsWith('app/host/')).map((d) => `${f} -> ${d}`));
    expect(bad).toEqual([]);
  });
});
