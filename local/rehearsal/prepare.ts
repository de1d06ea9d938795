/**
 * Synthesizes (with bundling) every assembly jest's "rehearsal" project
 * serves, unless kept from an earlier run with the same sources; jest's
 * globalSetup runs it once per run, so no suite or worker bundles.
 */
import { synthesizeAssembly, withCdkJsonContext } from './assembly.js';
import { JEST_REHEARSAL_CONTEXTS } from './checks.js';

const started = performance.now();
const synthesized = JEST_REHEARSAL_CONTEXTS.filter((c) => synthesizeAssembly(withCdkJsonContext(c)).synthesized).length;
process.stdout.write(`rehearsal: ${synthesized} of ${JEST_REHEARSAL_CONTEXTS.length} assemblies bundled, ${((performance.now() - started) / 1000).toFixed(1)} s\n`);
