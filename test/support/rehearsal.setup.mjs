// globalSetup of jest's "rehearsal" project: bundles the assemblies its suites
// serve, once per run (local/rehearsal/prepare.ts; kept by source hash).
import { execFileSync } from 'node:child_process';

export default function globalSetup() {
  const root = new URL('../..', import.meta.url).pathname;
  execFileSync(process.execPath, [`${root}node_modules/tsx/dist/cli.mjs`, `${root}local/rehearsal/prepare.ts`], { cwd: root, stdio: ['ignore', 'inherit', 'inherit'] });
}
