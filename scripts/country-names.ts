/** `npm run places:countries`: regenerates lambdas/core/country-names.generated.ts (see local/country-names.ts). */
import { writeFileSync } from 'node:fs';
import { countryNamesModule } from '../local/country-names.js';

const target = new URL('../lambdas/core/country-names.generated.ts', import.meta.url).pathname;
writeFileSync(target, countryNamesModule());
process.stdout.write(`wrote ${target}\n`);
