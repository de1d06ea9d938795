// dynalite's generated PEG parsers (CommonJS, untyped): the part test/support/dynalite-parse-memo.ts wraps.
declare module 'dynalite/db/conditionParser.js' {
  const parser: import('./dynalite-parse-memo.js').PegParser;
  export default parser;
}
declare module 'dynalite/db/updateParser.js' {
  const parser: import('./dynalite-parse-memo.js').PegParser;
  export default parser;
}
declare module 'dynalite/db/projectionParser.js' {
  const parser: import('./dynalite-parse-memo.js').PegParser;
  export default parser;
}
// dynalite's store, its request validation and its actions (CommonJS, untyped): what test/support/in-process-dynalite.ts calls directly.
declare module 'dynalite/db/index.js' {
  const db: { create(options: object): object };
  export default db;
}
declare module 'dynalite/validations/index.js' {
  const validations: {
    checkTypes(data: unknown, types: unknown): Record<string, unknown>;
    checkValidations(data: unknown, types: unknown, custom: unknown, store: object): void;
  };
  export default validations;
}
declare module 'dynalite/validations/*' {
  const validation: { types: unknown; custom?: unknown };
  export default validation;
}
declare module 'dynalite/actions/*' {
  const action: (store: object, data: unknown, cb: (err: unknown, data?: unknown) => void) => void;
  export default action;
}
