// The example's build: Vite + the React plugin, `@gateway/client` resolved to the package's source
// (as the package's own build would give it; the packed-client test checks the published build).
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';
import react from '@vitejs/plugin-react';

const client = (path: string) => fileURLToPath(new URL(`../../packages/client/src/${path}`, import.meta.url));

export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  plugins: [react()],
  resolve: {
    alias: [
      { find: /^@gateway\/client\/react$/, replacement: client('react.ts') },
      { find: /^@gateway\/client$/, replacement: client('index.ts') },
    ],
  },
  build: { outDir: 'dist', emptyOutDir: true, target: 'es2022' },
  logLevel: 'warn',
});
