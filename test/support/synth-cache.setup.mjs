// globalSetup and globalTeardown of jest's "dynalite" project: the run's folder of synthesized CDK assemblies
// (test/infra/support.ts, `synthesized`). Made empty at the start of every run and removed at its end, so a
// template is shared by the test files of one run and never served to another run, whose sources may differ.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** The variable naming the folder; the workers inherit it from the process that runs this. */
export const SYNTH_CACHE_VARIABLE = 'PE_SYNTH_CACHE';

export default function globalSetup() {
  process.env[SYNTH_CACHE_VARIABLE] = mkdtempSync(join(tmpdir(), 'pe-synth-run-'));
}

export function globalTeardown() {
  const dir = process.env[SYNTH_CACHE_VARIABLE];
  if (dir) rmSync(dir, { recursive: true, force: true });
  delete process.env[SYNTH_CACHE_VARIABLE];
}
