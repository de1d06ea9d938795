/** Ends a CLI with a message on stderr: exit 1 for bad data or failures, 2 for bad usage. */
export function fail(message: string, code: 1 | 2): never {
  process.stderr.write(`${message}\n`);
  process.exit(code);
}
