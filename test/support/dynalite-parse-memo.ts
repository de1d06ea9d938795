/**
 * dynalite's expression parsers, remembered. Every call dynalite validates
 * parses its expressions anew with PEG parsers (condition, update, key
 * condition, filter, projection): profiled on a pairs exploration, that was
 * an eighth of all its CPU, and the explorations send the same expressions
 * with the same names and values again and again (a schedule replays the
 * calls of the one before it, changed at one point).
 *
 * A parse is a function of the expression, its attribute names and values
 * and whether it is a key condition (what dynalite's validation hands the
 * parser), with one side effect: it strikes the names and values it uses off
 * the context's "unused" lists, which dynalite then reports. So a remembered
 * parse replays those strikes and its error, and hands out a copy of its tree
 * (dynalite writes into the tree of an update while applying it). What the
 * store accepts, refuses and answers is unchanged; test/unit/
 * dynalite-parse-memo.test.ts holds the remembered parse to the parser.
 */
import conditionParser from 'dynalite/db/conditionParser.js';
import projectionParser from 'dynalite/db/projectionParser.js';
import updateParser from 'dynalite/db/updateParser.js';

interface ParseContext {
  attrNames?: Record<string, string>;
  attrVals?: Record<string, unknown>;
  unusedAttrNames?: Record<string, boolean>;
  unusedAttrVals?: Record<string, boolean>;
  isKeyCondition?: boolean;
}
export interface PegParser {
  parse(input: string, options: { context: ParseContext }): unknown;
}

interface Remembered {
  readonly tree?: unknown;
  readonly error?: unknown;
  readonly usedNames: readonly string[];
  readonly usedValues: readonly string[];
}

/** Entries kept per parser before it starts afresh: a few thousand distinct calls fill an exploration's working set. */
const CAPACITY = 20_000;
const MEMO = Symbol.for('public-events.dynalite-parse-memo');

/** A copy of a parse tree: arrays, plain and null-prototype objects (dynalite keys its path maps by attribute name), primitives. */
function copy<T>(value: T): T {
  if (typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) return value.map(copy) as T;
  const out = Object.create(Object.getPrototypeOf(value) as object | null) as Record<string, unknown>;
  for (const key of Object.keys(value)) out[key] = copy((value as Record<string, unknown>)[key]);
  return out as T;
}

/** Whether a tree holds only what `copy` copies faithfully (else it is not remembered). */
function copyable(value: unknown): boolean {
  if (typeof value === 'function') return false;
  if (typeof value !== 'object' || value === null) return true;
  if (Array.isArray(value)) return value.every(copyable);
  const proto = Object.getPrototypeOf(value) as unknown;
  if (proto !== null && proto !== Object.prototype) return false;
  return Object.values(value).every(copyable);
}

const struck = (before: readonly string[], after: Record<string, boolean> | undefined) => before.filter((k) => !after || !(k in after));

/** Wraps one parser's `parse` (once; later calls do nothing). */
export function rememberParses(parser: PegParser): void {
  const marked = parser as PegParser & { [MEMO]?: true };
  if (marked[MEMO]) return;
  marked[MEMO] = true;
  const parse = parser.parse.bind(parser);
  const memo = new Map<string, Remembered>();
  parser.parse = (input, options) => {
    const context = options.context;
    const key = `${context.isKeyCondition ? 'k' : '-'}${JSON.stringify(context.attrNames ?? null)}\u0000${JSON.stringify(context.attrVals ?? null)}\u0000${input}`;
    const seen = memo.get(key);
    if (seen) {
      for (const name of seen.usedNames) delete context.unusedAttrNames?.[name];
      for (const value of seen.usedValues) delete context.unusedAttrVals?.[value];
      if ('error' in seen) throw seen.error;
      return copy(seen.tree);
    }
    const namesBefore = Object.keys(context.unusedAttrNames ?? {});
    const valuesBefore = Object.keys(context.unusedAttrVals ?? {});
    try {
      const tree = parse(input, options);
      if (copyable(tree)) remember(memo, key, { tree: copy(tree), usedNames: struck(namesBefore, context.unusedAttrNames), usedValues: struck(valuesBefore, context.unusedAttrVals) });
      return tree;
    } catch (error) {
      remember(memo, key, { error, usedNames: struck(namesBefore, context.unusedAttrNames), usedValues: struck(valuesBefore, context.unusedAttrVals) });
      throw error;
    }
  };
}

function remember(memo: Map<string, Remembered>, key: string, entry: Remembered): void {
  if (memo.size >= CAPACITY) memo.clear();
  memo.set(key, entry);
}

/** The three parsers dynalite's validation uses, in this module registry (a jest test file's own). */
export function rememberDynaliteParses(): void {
  for (const parser of [conditionParser, updateParser, projectionParser]) rememberParses(parser);
}
