/**
 * `npm run openapi`: writes the generated description files under docs/:
 * both OpenAPI documents for the default settings (key header
 * x-events-api-key, typed variant) and the dataset's JSON Schema. The served
 * documents are generated the same way for each deployment's settings; tests
 * fail when a committed file is out of date.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { datasetSchemaFile, documentFiles } from '../local/schema-files.js';

const docs = new URL('../docs/', import.meta.url).pathname;
mkdirSync(`${docs}openapi`, { recursive: true });
const files: Record<string, string> = {
  ...Object.fromEntries(Object.entries(documentFiles()).map(([name, text]) => [`openapi/${name}`, text])),
  'dataset.schema.json': datasetSchemaFile(),
};
for (const [name, text] of Object.entries(files)) {
  writeFileSync(`${docs}${name}`, text);
  process.stdout.write(`wrote docs/${name}\n`);
}
