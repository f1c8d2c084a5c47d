// The addon's TypeScript interface is the addon's: every method the binding registers (native/addon/*.cpp, each
// file's kMethods / kFunctions table joined by VLADDON_REGISTER) is declared, and every declared method exists.
// The C++ side is read from the built addon (the Session and RealDevice classes and the module's exports, exactly
// as the method tables made them); the TypeScript side with the type checker, so the members a lab merges into
// NativeSession / NativeAddon (labs/nvmf/handlers.ts, labs/sg/sg.ts: `declare module`) count too.
import path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { loadAddon, repoRoot } from './native.ts';
import { LAB_MANIFESTS } from '../../labs/index.generated.ts';

const addon = loadAddon();   // throws when the addon is not built: this suite fails, it does not skip

// every file that declares or merges into the interfaces: the platform's and each lab's handlers / modules
const roots = ['app/host/native.ts', 'app/host/realdev.ts', 'labs/sg/sg.ts',
  ...LAB_MANIFESTS.flatMap((m) => ('handlers' in m && typeof m.handlers === 'string' ? [path.posix.join('labs', m.id, m.handlers)] : []))];
const program = ts.createProgram(roots.map((f) => path.join(repoRoot, f)), { strict: true, noEmit: true, allowImportingTsExtensions: true, module: ts.ModuleKind.ESNext, moduleResolution: ts.ModuleResolutionKind.Bundler, target: ts.ScriptTarget.ES2022, skipLibCheck: true, types: [] });
const checker = program.getTypeChecker();

/** the member names of an exported interface of `file`, merged declarations included */
function members(file: string, name: string): string[] {
  const sf = program.getSourceFile(path.join(repoRoot, file));
  if (!sf) throw new Error(`${file} is not in the program`);
  const sym = checker.getExportsOfModule(checker.getSymbolAtLocation(sf)!).find((s) => s.name === name);
  if (!sym) throw new Error(`${file} exports no ${name}`);
  return checker.getPropertiesOfType(checker.getDeclaredTypeOfSymbol(sym)).map((p) => p.name).sort();
}
const methodsOf = (proto: object) => Object.getOwnPropertyNames(proto).filter((n) => n !== 'constructor').sort();

describe('the addon\'s TypeScript interface against its method tables', () => {
  it('NativeSession + NativeCmSession (app/host/native.ts + the labs\' merged members) = the Session class', () => {
    const cpp = methodsOf(addon.Session.prototype);
    expect(cpp.length).toBeGreaterThan(50);
    // the CM's methods have their own interface (a real device's session has no device CM: RealSession implements
    // NativeSession only)
    const declared = [...members('app/host/native.ts', 'NativeSession'), ...members('app/host/native.ts', 'NativeCmSession')];
    expect(declared.sort()).toEqual(cpp);
  });

  it('NRealDevice (app/host/realdev.ts) = the RealDevice class', () => {
    const real = (addon as { RealDevice?: { prototype: object } }).RealDevice;
    expect(real, 'the addon registers RealDevice (native/addon/realdev.cpp)').toBeDefined();
    expect(members('app/host/realdev.ts', 'NRealDevice')).toEqual(methodsOf(real!.prototype));
  });

  it('NativeAddon (with RealAddon and the labs\' merged functions) = the module\'s exports', () => {
    const declared = new Set([...members('app/host/native.ts', 'NativeAddon'), ...members('app/host/realdev.ts', 'RealAddon')]);
    expect([...declared].sort()).toEqual(Object.keys(addon).sort());
    expect(Object.getOwnPropertyNames(addon.Session).filter((n) => !['length', 'name', 'prototype', 'arguments', 'caller'].includes(n))).toEqual(['profiles']);
  });
});
