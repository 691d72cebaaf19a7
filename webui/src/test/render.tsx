// Testing Library's render inside what the app's main.tsx provides: a fresh
// TanStack Query cache per render (no answers shared between tests) and the
// browser router on jsdom's location (set it with history.replaceState first).
import { QueryClientProvider } from '@tanstack/react-query';
import { render as baseRender, type RenderOptions } from '@testing-library/react';
import type { ReactElement, ReactNode } from 'react';
import { BrowserRouter } from 'react-router';
import { createQueryClient } from '../api/queries';

export function render(ui: ReactElement, options: Omit<RenderOptions, 'wrapper'> = {}) {
  const client = createQueryClient();
  const wrapper = ({ children }: { children: ReactNode }) => (
    <QueryClientProvider client={client}>
      <BrowserRouter>{children}</BrowserRouter>
    </QueryClientProvider>
  );
  return { ...baseRender(ui, { ...options, wrapper }), queryClient: client };
}
