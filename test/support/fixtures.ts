import { readFileSync } from 'node:fs';
import type { Dataset } from '../../lambdas/core/dataset.js';

export const DEMO_FILE = new URL('../../data/demo.json', import.meta.url).pathname;
export const CONTRACT_EXAMPLE = new URL('../fixtures/contract-example.json', import.meta.url).pathname;

export function demoDataset(): Dataset {
  return JSON.parse(readFileSync(DEMO_FILE, 'utf8')) as Dataset;
}

/** The demo keys (plaintext lives only in the dataset file, as the contract says). */
export const KEYS = {
  both: 'pk_demo_0123456789abcdefghijklmnopqrstuv',
  eventsOnly: 'pk_events_only_0123456789abcdefghijklmnop',
  guestsOnly: 'pk_guests_only_0123456789abcdefghijklmnop',
  revoked: 'pk_revoked_0123456789abcdefghijklmnopqrst',
};

/** "Now" for every test that reads the demo data. */
export const NOW = '2026-11-21T12:00:00.000Z';
