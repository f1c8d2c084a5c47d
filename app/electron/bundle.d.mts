/** Bundles app/electron/{main,preload}.ts and app/host/main.ts (+ recorder) for Electron into dist/. */
export function bundleElectron(): Promise<void>;
