// Vitest: component tests run in jsdom (unmounted after each test, with what
// jsdom lacks stubbed); files marked `@vitest-environment node` run bare.
import { cleanup } from '@testing-library/react';
import { afterEach } from 'vitest';

if (typeof window !== 'undefined') {
  afterEach(() => {
    cleanup();
    window.history.replaceState(null, '', '/');
  });
  class NoResizeObserver {
    observe() {}
    unobserve() {}
    disconnect() {}
  }
  (globalThis as unknown as { ResizeObserver: unknown }).ResizeObserver ??= NoResizeObserver;
  window.scrollTo = () => {};
}
