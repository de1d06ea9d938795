/**
 * What a linter would ban, without adding one: focused or skipped tests,
 * silenced type errors, `any` without a comment saying why, domain logic
 * (lambdas/core) that runs store code, import cycles, and imports back up a
 * floor.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from '@jest/globals';
import ts from 'typescript';
import { ROOT } from '../support/process.js';

const files = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard', '*.ts', '*.js', '*.mjs'], { cwd: ROOT, encoding: 'utf8' })
  .split('\n')
  .filter(Boolean);

function offending(pattern: RegExp): string[] {
  return files.flatMap((file) =>
    readFileSync(`${ROOT}${file}`, 'utf8')
      .split('\n')
      .flatMap((line, i, lines) => {
        if (!pattern.test(line)) return [];
        // The ban's own definitions (this file) are not uses.
        if (file === 'test/unit/hygiene.test.ts') return [];
        return [{ file, n: i + 1, line, before: lines[i - 1] ?? '' }];
      })
      .map((hit) => `${hit.file}:${hit.n}: ${hit.line.trim()}`),
  );
}

interface Import {
  from: string;
  /** The imported file as tracked by git (`./x.js` resolves to `x.ts` as the sources write it). */
  to: string;
  typeOnly: boolean;
}

/** Every relative import, re-export and dynamic `import()` of a tracked file, parsed by TypeScript (not matched by regex). */
function importsOf(file: string): Import[] {
  const source = ts.createSourceFile(file, readFileSync(`${ROOT}${file}`, 'utf8'), ts.ScriptTarget.Latest, true);
  const found: Import[] = [];
  const add = (specifier: string, typeOnly: boolean) => {
    if (!specifier.startsWith('.')) return;
    const target = join(dirname(file), specifier);
    const to = [target, target.replace(/\.js$/, '.ts'), `${target}.ts`].find((c) => files.includes(c)) ?? target;
    found.push({ from: file, to, typeOnly });
  };
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
      const clause = node.importClause;
      const bindings = clause?.namedBindings;
      const allNamedTypes = !!bindings && ts.isNamedImports(bindings) && bindings.elements.every((e) => e.isTypeOnly) && !clause?.name;
      add(node.moduleSpecifier.text, !!clause?.isTypeOnly || allNamedTypes);
    } else if (ts.isExportDeclaration(node) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
      add(node.moduleSpecifier.text, node.isTypeOnly);
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword && node.arguments[0] && ts.isStringLiteral(node.arguments[0])) {
      add(node.arguments[0].text, false);
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument) && ts.isStringLiteral(node.argument.literal)) {
      add(node.argument.literal.text, true);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

const imports = files.filter((f) => /\.(ts|mts|js|mjs)$/.test(f) && !f.endsWith('.d.ts')).flatMap(importsOf);

/** Every import cycle (type-only imports included: a circle of types is still a circle), as strongly connected components. */
function cycles(): string[][] {
  const next = new Map<string, string[]>();
  for (const i of imports) next.set(i.from, [...(next.get(i.from) ?? []), i.to]);
  // Tarjan's algorithm.
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const connect = (v: string): void => {
    index.set(v, counter);
    low.set(v, counter++);
    stack.push(v);
    onStack.add(v);
    for (const w of next.get(v) ?? []) {
      if (!index.has(w)) {
        connect(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1 || next.get(v)?.includes(v)) found.push(component.sort());
    }
  };
  for (const v of next.keys()) if (!index.has(v)) connect(v);
  return found;
}

/**
 * The floors: what each folder may import from (its own folder, and the
 * floors below it). The deployed code is the ground: core (pure rules) under
 * the store (DynamoDB) under the HTTP plumbing under the handlers; the route
 * table (lambdas/routes.ts) sits beside the plumbing. The local server stands
 * on all of it; the MCP adapter on the client package and core's id patterns;
 * the client package is a package of its own and imports nothing outside it.
 * The key-management function (lambdas/key-admin/) stands where the handlers
 * do; keys/ is the web product's kit (its signed client and example) and
 * stands alone; local/ may use that kit as the web product's stand-in.
 *
 * Not stated here yet: lambdas/ingest/, lambdas/openapi/, lib/, scripts/,
 * bin/ and test/.
 */
const STORE = (...parts: string[]) => parts.map((p) => `lambdas/store/${p}/`);
const FLOORS: Record<string, { may: string[]; typesFrom?: string[] }> = {
  'lambdas/core/': { may: ['lambdas/core/'] },
  // The store's parts, ground first: the table (keys, item shapes, one IO seam); the keys and the feeds on it; the read
  // side on the feeds (a feed's page); the change path on all of them (docs/data-model.md, "Where the code lives").
  'lambdas/store/table/': { may: ['lambdas/core/', ...STORE('table')] },
  // Webhooks' items sit on the table: a key's retire closes its webhooks (PRODUCT P18), so the keys stand on them.
  'lambdas/store/webhooks/': { may: ['lambdas/core/', ...STORE('table', 'webhooks')] },
  'lambdas/store/keys/': { may: ['lambdas/core/', ...STORE('table', 'webhooks', 'keys')] },
  'lambdas/store/feeds/': { may: ['lambdas/core/', ...STORE('table', 'feeds')] },
  'lambdas/store/reads/': { may: ['lambdas/core/', ...STORE('table', 'feeds', 'reads')] },
  'lambdas/store/changes/': { may: ['lambdas/core/', ...STORE('table', 'webhooks', 'keys', 'feeds', 'reads', 'changes')] },
  'lambdas/http/': { may: ['lambdas/core/', 'lambdas/store/', 'lambdas/http/', 'lambdas/routes.ts'] },
  'lambdas/handlers/': {
    may: ['lambdas/core/', 'lambdas/store/', 'lambdas/http/', 'lambdas/openapi/', 'lambdas/routes.ts', 'lambdas/handlers/'],
  },
  // The delivery functions (PRODUCT P18) stand where the handlers do; the key-management function reads a webhook's first page and checks its URL with them.
  'lambdas/delivery/': { may: ['lambdas/core/', 'lambdas/store/', 'lambdas/http/', 'lambdas/delivery/'] },
  'lambdas/key-admin/': { may: ['lambdas/core/', 'lambdas/store/', 'lambdas/http/', 'lambdas/delivery/', 'lambdas/key-admin/'] },
  // The outbound guard (ARCHITECTURE rule 13) is a leaf inside lambdas/delivery/: the core's rules and the table's
  // definitions at most, never the store's IO, a feed or the delivery that uses it.
  'lambdas/delivery/guard/': { may: ['lambdas/core/', 'lambdas/store/table/', 'lambdas/delivery/guard/'] },
  'keys/': { may: ['keys/'] },
  'local/': { may: ['local/', 'lambdas/', 'lib/', 'keys/'] },
  'mcp/': { may: ['mcp/', 'client/src/', 'lambdas/core/'] },
  'client/': { may: ['client/'] },
};

describe('code hygiene', () => {
  // ARCHITECTURE: core is pure, DynamoDB access lives in the store. The item shapes the core maps live in the core
  // (lambdas/core/read-items.ts), so it imports nothing of the store, not even a type.
  it('core imports nothing from the store', () => {
    const core = files.filter((f) => f.startsWith('lambdas/core/'));
    const hits = imports.filter((i) => i.from.startsWith('lambdas/core/') && i.to.startsWith('lambdas/store/')).map((i) => `${i.from}: ${i.to}`);
    expect(core.length).toBeGreaterThan(10);
    expect(hits).toEqual([]);
  });

  it("keeps every file of the store in one of its parts' folders", () => {
    const store = files.filter((f) => f.startsWith('lambdas/store/'));
    expect(store.length).toBeGreaterThan(20);
    expect(store.filter((f) => !Object.keys(FLOORS).some((floor) => floor.startsWith('lambdas/store/') && f.startsWith(floor)))).toEqual([]);
  });

  // No import back up a floor: what a deployed Lambda runs lives under lambdas/ (esbuild bundles from there), and the
  // web product's kit in keys/ (its signed client and example) stands alone. The operator CLIs live in local/cli/.
  it.each([
    ['lambdas/', 'lambdas/'],
    ['keys/', 'keys/'],
  ])('files under %s import nothing from outside %s', (folder, allowed) => {
    const inFolder = files.filter((f) => f.startsWith(folder) && f.endsWith('.ts'));
    // The parsed imports (type-only, re-exports and dynamic import() included).
    const hits = imports.filter((i) => i.from.startsWith(folder) && !i.to.startsWith(allowed)).map((i) => `${i.from}: ${i.to}`);
    expect(inFolder.length).toBeGreaterThanOrEqual(2);
    expect(hits).toEqual([]);
  });

  it('has no focused or skipped tests', () => {
    expect(offending(/\b(it|test|describe)\.(only|skip|todo)\(|\bx(it|test|describe)\(|\bf(it|describe)\(/)).toEqual([]);
  });

  it('silences no type error', () => {
    expect(offending(/@ts-(ignore|nocheck|expect-error)/)).toEqual([]);
  });

  it('uses `any` only with a comment on the line before saying why', () => {
    const hits = files.flatMap((file) => {
      const lines = readFileSync(`${ROOT}${file}`, 'utf8').split('\n');
      return lines.flatMap((line, i) =>
        /(:\s*any\b|<any>|\bas any\b|\bany\[\]|,\s*any>)/.test(line) && !/^\s*(\/\/|\*)/.test(lines[i - 1] ?? '') && file !== 'test/unit/hygiene.test.ts'
          ? [`${file}:${i + 1}: ${line.trim()}`]
          : [],
      );
    });
    expect(hits).toEqual([]);
  });

  it('has no import cycle', () => {
    expect(imports.length).toBeGreaterThan(500);
    expect(cycles()).toEqual([]);
  });

  it('imports nothing from a floor above', () => {
    // The longest folder that holds the file: a part nested in another floor (lambdas/delivery/guard/) keeps its own rule.
    const floorOf = (file: string) =>
      Object.keys(FLOORS)
        .filter((dir) => file.startsWith(dir))
        .sort((a, b) => b.length - a.length)[0];
    const upward = imports.flatMap((i) => {
      const floor = floorOf(i.from);
      if (!floor) return [];
      const { may, typesFrom = [] } = FLOORS[floor]!;
      const allowed = [...may, ...(i.typeOnly ? typesFrom : [])].some((p) => i.to === p || i.to.startsWith(p));
      return allowed ? [] : [`${i.from} -> ${i.to}${i.typeOnly ? ' (types)' : ''}`];
    });
    for (const floor of Object.keys(FLOORS)) expect(imports.some((i) => i.from.startsWith(floor))).toBe(true);
    expect(upward).toEqual([]);
  });
});
