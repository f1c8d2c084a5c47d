// Vite config for the console renderer (browser mode and Electron share the same build).
import { defineConfig } from 'vite';
import react from '@vitejs/plugin-react';

// `vite` dev server: /rpc is proxied to a running browser-mode server (npm start; default port 5199)
const backend = process.env.VL_BACKEND_WS ?? 'ws://127.0.0.1:5199';

export default defineConfig({
  root: 'renderer',
  base: './',
  plugins: [react()],
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
  },
} as never);
