// ESLint over the whole project (gateway, sandbox, client package, tests, benches): the recommended
// rules of ESLint and typescript-eslint, on top of `tsc --strict`, which already does the type checks.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['**/node_modules/**', '**/dist/**', 'data/**', '**/*.js', '!eslint.config.js'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { ecmaVersion: 2023, sourceType: 'module' },
    rules: {
      // Unused names are errors, except the conventional `_`-prefixed placeholders.
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
      // Wire data from the engine and test fixtures are typed at their edges; `any` stays visible, not banned.
      '@typescript-eslint/no-explicit-any': 'off',
    },
  },
);
