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
