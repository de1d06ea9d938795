// The rehearsal's tests pin "now" as the local server's do (fixedClock(NOW)),
// and may move it (the quota's UTC day): with REHEARSAL_NOW set, this preload
// makes Date read that instant in the function's process, and each
// invocation may move it (runner.mjs). It changes the clock only; the bundle
// and the SDK run as built.
let fixed = Date.parse(process.env.REHEARSAL_NOW ?? '');
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
  globalThis[Symbol.for('rehearsal.setNow')] = (iso) => {
    const next = Real.parse(iso);
    if (!Number.isNaN(next)) fixed = next;
  };
}
