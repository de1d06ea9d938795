// One Lambda execution environment for the rehearsal: loads a bundled asset
// from cdk.out exactly as built (its handler string `file.export`), then runs
// one invocation at a time on request from the parent (lambda-host.ts), the
// way Lambda's runtime does. Plain JavaScript on purpose: nothing is compiled
// between the bundle and the process that runs it.
import { pathToFileURL } from 'node:url';
import { join } from 'node:path';

const root = process.env.LAMBDA_TASK_ROOT;
const [file, exported] = (process.env._HANDLER ?? '').split('.');
// The init phase, as Lambda runs it before the first invocation (outside the function's timeout).
let handler;
let initError;
try {
  handler = (await import(pathToFileURL(join(root, `${file}.mjs`)).href))[exported];
  if (typeof handler !== 'function') initError = new Error(`Runtime.HandlerNotFound: ${process.env._HANDLER} is undefined or not exported`);
} catch (error) {
  initError = error;
}

process.on('message', async ({ id, event, timeoutMs, stretch, requestId, now }) => {
  const wallStart = performance.now();
  const cpuStart = process.cpuUsage();
  try {
    if (initError) throw initError;
    if (now) globalThis[Symbol.for('rehearsal.setNow')]?.(now);
    const context = {
      callbackWaitsForEmptyEventLoop: true,
      functionName: process.env.AWS_LAMBDA_FUNCTION_NAME,
      functionVersion: '$LATEST',
      invokedFunctionArn: process.env.REHEARSAL_FUNCTION_ARN,
      memoryLimitInMB: process.env.AWS_LAMBDA_FUNCTION_MEMORY_SIZE,
      awsRequestId: requestId,
      logGroupName: process.env.AWS_LAMBDA_LOG_GROUP_NAME,
      logStreamName: 'rehearsal',
      // Real time, whatever clock the handler sees, spent as the parent counts it (contention.ts): the
      // larger of this process's CPU time and its wall time shrunk by the machine's contention at the start.
      getRemainingTimeInMillis: () => {
        const cpu = process.cpuUsage(cpuStart);
        return Math.max(0, timeoutMs - Math.max((cpu.user + cpu.system) / 1000, (performance.now() - wallStart) / stretch));
      },
    };
    const result = await handler(event, context);
    process.send({ id, ok: true, payload: JSON.stringify(result ?? null) });
  } catch (error) {
    process.send({ id, ok: false, errorType: error?.name ?? 'Error', errorMessage: String(error?.message ?? error) });
  }
});
process.send({ ready: true });
