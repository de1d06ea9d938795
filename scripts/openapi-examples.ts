/** `npm run openapi:examples`: regenerates lambdas/openapi/examples.generated.ts (see local/openapi-examples.ts). */
import { writeFileSync } from 'node:fs';
import { collectExamples, examplesModule } from '../local/openapi-examples.js';

const target = new URL('../lambdas/openapi/examples.generated.ts', import.meta.url).pathname;
writeFileSync(target, examplesModule(await collectExamples()));
process.stdout.write(`wrote ${target}\n`);
