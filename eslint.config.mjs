// ESLint (flat config): the recommended rules with type information, so that promise mistakes
// (a storage call neither awaited nor returned) fail CI. Formatting is Prettier's business.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  // .dependency-cruiser.cjs is the import rules' configuration (CommonJS data for the tool), in no TypeScript project.
  {
    ignores: [
      'node_modules/',
      '.wrangler/',
      'dist/',
      'data/',
      'public/',
      'worker-configuration.d.ts',
      '.dependency-cruiser.cjs',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: {
        project: ['./tsconfig.json', './scripts/tsconfig.json'],
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_' },
      ],
    },
  },
  {
    // Tests read JSON answers as `any` on purpose: the assertions are the type check there.
    files: ['test/**/*.ts'],
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
    },
  },
  {
    // A Durable Object's class is a façade over parts named for what they decide (docs/README.md
    // "Working on the code"): a decision that grows it past this goes into a part instead.
    files: [
      'src/threeds/transaction/transaction-object.ts',
      'src/events/event-log.ts',
      'src/tokens/token-group.ts',
      'src/fake-3ds-server/transaction.ts',
      'src/fake-3ds-server/control.ts',
    ],
    rules: { 'max-lines': ['error', { max: 450, skipBlankLines: false, skipComments: false }] },
  },
  { files: ['**/*.mjs', '**/*.js'], ...tseslint.configs.disableTypeChecked },
  {
    files: ['**/*.mjs', '**/*.js'],
    languageOptions: { globals: { console: 'readonly', process: 'readonly', URL: 'readonly', setTimeout: 'readonly' } },
  },
  {
    // The README's examples (npm run try:*): Node scripts with the web platform's globals.
    files: ['examples/**/*.mjs'],
    languageOptions: { globals: { Buffer: 'readonly', fetch: 'readonly', URLSearchParams: 'readonly' } },
  },
);
