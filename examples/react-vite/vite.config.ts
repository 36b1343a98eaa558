// The example's build: Vite + the React plugin, `@gateway/client` resolved to the package's source
// (as the package's own build would give it; the packed-client test checks the published build).
// VITE_GATEWAY_URL (read by src/main.tsx through import.meta.env) picks the gateway.
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';
import react from '@vitejs/plugin-react';

const client = (path: string) => fileURLToPath(new URL(`../../packages/client/src/${path}`, import.meta.url));

export default defineConfig(({ command }) => ({
  root: fileURLToPath(new URL('.', import.meta.url)),
  plugins: [react()],
  resolve: {
    alias: [
      { find: /^@gateway\/client\/react$/, replacement: client('react.ts') },
      { find: /^@gateway\/client$/, replacement: client('index.ts') },
    ],
  },
  build: { outDir: 'dist', emptyOutDir: true, target: 'es2022' },
  // The dev server says where it listens (its URL); a build prints warnings only.
  logLevel: command === 'serve' ? 'info' : 'warn',
}));
