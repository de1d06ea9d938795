/**
 * Jest runs the TypeScript sources as native ES modules (the project is
 * "type": "module" because middy >= 5 is ESM-only). ts-jest only transpiles;
 * type checking is `npm run typecheck`, run first by `npm test`.
 */
/** @type {import('jest').Config} */
export default {
  testEnvironment: 'node',
  extensionsToTreatAsEsm: ['.ts'],
  transform: {
    '^.+\\.ts$': ['ts-jest', { useESM: true, diagnostics: false }],
  },
  // Sources import siblings as `./x.js` (ESM rules); jest resolves them to the .ts files.
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  testMatch: ['<rootDir>/test/{unit,integration,e2e,infra}/**/*.test.ts'],
  testTimeout: 30000,
};
