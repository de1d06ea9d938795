/**
 * Jest's TypeScript transform: esbuild's, type information stripped only (the
 * type check is `npm run typecheck`, run first by `npm test`), as ES modules,
 * with a source map for stack traces. It replaced ts-jest's transpileModule,
 * which cost each worker TypeScript's load and tens of milliseconds per file.
 * The tsconfig options that change emitted code are passed here (isolated
 * modules: each file alone, type-only imports dropped as written).
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { transformSync, version } from 'esbuild';

const TSCONFIG = JSON.parse(readFileSync(new URL('../../tsconfig.json', import.meta.url), 'utf8'));
const OPTIONS = {
  loader: 'ts',
  format: 'esm',
  target: 'es2022',
  sourcemap: 'external',
  tsconfigRaw: { compilerOptions: { verbatimModuleSyntax: TSCONFIG.compilerOptions.verbatimModuleSyntax, useDefineForClassFields: true } },
};

export default {
  canInstrument: false,
  getCacheKey(source, path, options) {
    return createHash('sha256').update(version).update(JSON.stringify(OPTIONS)).update(path).update('\0').update(source).update(options.configString).digest('hex');
  },
  process(source, path) {
    const { code, map } = transformSync(source, { ...OPTIONS, sourcefile: path });
    return { code, map };
  },
};
