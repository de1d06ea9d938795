// The rehearsal's tests pin "now" as the local server's do (fixedClock(NOW)):
// with REHEARSAL_NOW set, this preload makes Date read that instant in the
// function's process. It changes the clock only; the bundle and the SDK run
// as built.
const fixed = Date.parse(process.env.REHEARSAL_NOW ?? '');
if (!Number.isNaN(fixed)) {
  const Real = Date;
  globalThis.Date = class extends Real {
    constructor(...args) {
      if (args.length === 0) super(fixed);
      else super(...args);
    }
    static now() {
      return fixed;
    }
  };
}
