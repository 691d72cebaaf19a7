/// <reference types="vitest/config" />
// Builds the web UI into dist/ (CMake passes --outDir build/webui). `npm run
// dev` serves it with the API proxied to a master (RING_MASTER, default
// http://127.0.0.1:8080). Vitest runs src/**/*.test.ts(x) in jsdom.
import { defineConfig } from 'vite';
import react from '@vitejs/plugin-react';

export default defineConfig({
  plugins: [react()],
  build: {
    outDir: 'dist',
    target: 'es2022',
    chunkSizeWarningLimit: 700,
  },
  server: {
    proxy: { '/api': process.env.RING_MASTER ?? 'http://127.0.0.1:8080' },
  },
  test: {
    environment: 'jsdom',
    // Worker threads start faster than the default child processes (about a
    // sixth of the suite's time here); each file is still isolated.
    pool: 'threads',
    include: ['src/**/*.test.{ts,tsx}'],
    setupFiles: ['src/test/setup.ts'],
    restoreMocks: true,
  },
});
