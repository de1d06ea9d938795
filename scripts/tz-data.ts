/** `npm run places:tz`: regenerates lambdas/core/tz-data.generated.ts (see local/tz-data.ts). */
import { writeFileSync } from 'node:fs';
import { tzDataModule } from '../local/tz-data.js';

const target = new URL('../lambdas/core/tz-data.generated.ts', import.meta.url).pathname;
writeFileSync(target, tzDataModule());
process.stdout.write(`wrote ${target}\n`);
