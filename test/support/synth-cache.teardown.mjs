// globalTeardown of jest's "dynalite" project (why: synth-cache.setup.mjs).
export { globalTeardown as default } from './synth-cache.setup.mjs';
