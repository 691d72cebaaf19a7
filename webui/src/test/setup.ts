// Vitest: component tests run in jsdom (unmounted and signed out after each
// test, with what jsdom lacks stubbed); files marked `@vitest-environment
// node` run bare.
import { cleanup } from '@testing-library/react';
import { afterEach } from 'vitest';
import { endSession } from '../auth/session';

if (typeof window !== 'undefined') {
  afterEach(() => {
    cleanup();
    window.history.replaceState(null, '', '/');
    endSession();
    window.localStorage.clear();
    window.sessionStorage.clear();
  });
  class NoResizeObserver {
    observe() {}
    unobserve() {}
    disconnect() {}
  }
  (globalThis as unknown as { ResizeObserver: unknown }).ResizeObserver ??= NoResizeObserver;
  window.scrollTo = () => {};
}
