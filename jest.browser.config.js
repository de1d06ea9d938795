/**
 * `npm run test:browser`: the embed widget in a real headless Chromium
 * (Debian's /usr/bin/chromium, driven by playwright-core). Kept out of
 * `npm test` because it needs that browser installed; `.ci/run` installs it.
 */
import { common } from './jest.config.js';

/** @type {import('jest').Config} */
export default {
  ...common,
  testMatch: ['<rootDir>/test/browser/**/*.test.ts'],
  testTimeout: 90000,
};
