/// <reference types="vitest/config" />
// Builds the web UI into dist/ (CMake passes --outDir build/webui). `npm run
// dev` serves it with the API proxied to a master (RING_MASTER, default
// http://127.0.0.1:8080), shells' terminal WebSockets included. Vitest runs src/**/*.test.ts(x) in jsdom.
import { defineConfig } from 'vite';
import react from '@vitejs/plugin-react';

export default defineConfig({
  plugins: [react()],
  build: {
    outDir: 'dist',
    target: 'es2022',
    // The main chunk; the terminal (xterm.js) and the fork editor (CodeMirror)
    // are chunks of their own, loaded with their pages.
    chunkSizeWarningLimit: 500,
  },
  server: {
    proxy: { '/api': { target: process.env.RING_MASTER ?? 'http://127.0.0.1:8080', ws: true } },
  },
  test: {
    environment: 'jsdom',
    // Worker threads start faster than the default child processes, and
    // files share their worker's environment instead of building a jsdom each
    // (three quarters of the suite's time): 28 -> 7 CPU-s. Files therefore
    // share modules: setup.ts resets the DOM, storage and session after every
    // test, and a module is mocked the same way in every file that mocks it
    // (src/test/RecordingLineChart.tsx). `npx vitest run --sequence.shuffle`
    // runs the files in another order to show that none depends on it.
    pool: 'threads',
    isolate: false,
    include: ['src/**/*.test.{ts,tsx}'],
    setupFiles: ['src/test/setup.ts'],
    restoreMocks: true,
  },
});
