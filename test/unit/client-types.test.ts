/**
 * The client's generated types (client/src/generated/) match the OpenAPI
 * documents in docs/openapi/ as they are now; after `npm run openapi` changes
 * a document, `npm run client:types` regenerates them.
 */
import { describe, expect, it } from '@jest/globals';
import { staleClientTypes } from '../../scripts/client-types.js';

describe('client types', () => {
  it('are current with docs/openapi/*.json', async () => {
    const stale = await staleClientTypes();
    const hint = stale.length ? `Stale: ${stale.join(', ')}. Run \`npm run client:types\` and commit the result.` : 'current';
    expect(hint).toBe('current');
  });
});
