// Vite config for the console renderer (browser mode and Electron share the same build).
import { defineConfig } from 'vite';
import react from '@vitejs/plugin-react';

// `vite` dev server: /rpc is proxied to a running browser-mode server (npm start; default port 5199)
const backend = process.env.VL_BACKEND_WS ?? 'ws://127.0.0.1:5199';

// The dev server injects CSS as <style> elements (hot reload): only there does the page's CSP allow inline styles;
// the built console (npm start, Electron) keeps style-src 'self'.
const devInlineStyles = {
  name: 'verbslab-dev-inline-styles',
  apply: 'serve' as const,
  transformIndexHtml: (html: string) => html.replace("style-src 'self';", "style-src 'self' 'unsafe-inline';"),
};

export default defineConfig({
  root: 'renderer',
  base: './',
  plugins: [react(), devInlineStyles],
  build: { outDir: '../dist/renderer', emptyOutDir: true, chunkSizeWarningLimit: 1500 },
  server: {
    host: '127.0.0.1',
    strictPort: false,
    proxy: { '/rpc': { target: backend, ws: true } },
  },
  preview: { host: '127.0.0.1' },
  test: {
    include: ['**/*.test.ts', '**/*.test.tsx'],
    environment: 'node',
    // tests assert behaviour, not speed: on a loaded 2-core machine a library replay can take longer than vitest's 5 s
    testTimeout: 120_000,
    hookTimeout: 120_000,
  },
} as never);
