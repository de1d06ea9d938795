/**
 * The schedule explorations' fast path into dynalite: a client that sends a
 * DocumentClient command straight to dynalite's request handler as the JSON
 * body DynamoDB's protocol carries, without the SDK's serialize, build,
 * finalize and deserialize steps (endpoint rules, signing, user agent,
 * retries, the schema-based serde). Measured on this machine, those steps are
 * about nine tenths of an in-process call's CPU (a consistent GetItem: 0.44 ms
 * through the SDK, 0.05 ms straight to the handler), and the explorations make
 * millions of calls.
 *
 * What stays real: the store (dynalite's type checks and validation, the
 * expression parsers, the actions, its errors: in-process-dynalite.ts's
 * `call` hands them each operation as its HTTP handler would) and the DocumentClient's own
 * marshalling (lib-dynamodb's DocumentMarshall and DocumentUnmarshall steps,
 * run from the command itself on a stack of their own). An error comes back
 * as the SDK's own exception class for its name, as the SDK would raise it.
 * What it leaves out: the SDK's retries, so a caller that needs a lost
 * response retried does it itself (schedules.ts does, as the standard
 * strategy would: the same request once more). test/integration/
 * schedules-transport.test.ts holds this path to the SDK's: the same
 * schedules through both make the same calls and get the same answers.
 */
import * as dynamodb from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClientCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { constructStack } from '@smithy/core/client';

/** One DynamoDB operation on the store: the protocol's JSON in, its JSON out with the HTTP status. */
export type StoreCall = (operation: string, body: unknown) => Promise<{ status: number; json: Record<string, unknown> }>;

/** A command as the explorations send it: its base command's name (`GetItemCommand`), its input as given, and how to send it. */
export type Intercept = (command: string, input: Record<string, unknown>, send: () => Promise<{ output: unknown }>) => Promise<{ output: unknown }>;

/** createDocumentClient's translation options (lambdas/store/table/client.ts): the same marshalling. */
const TRANSLATE = { marshallOptions: { removeUndefinedValues: true } };

type Handler = (args: { input: Record<string, unknown> }) => Promise<{ output: unknown }>;
/** An `initialize` middleware as the SDK's stack takes it. */
type Initialize = (next: Handler, context: { clientName: string; commandName: string }) => Handler;

type AnyCommand = { input: Record<string, unknown>; middlewareStack: unknown; constructor: { name: string } };
type DocumentCommand = AnyCommand & { constructor: unknown; clientCommand: { constructor: { name: string } }; addMarshallingMiddleware(config: unknown): void };

/**
 * A DocumentClient stand-in for the explorations: `send` takes lib-dynamodb's
 * commands and client-dynamodb's (CreateTable, DeleteTable…) and answers as
 * the SDK does. `intercept` (optional) wraps every call, as an `initialize`
 * middleware wraps an SDK call. Middleware added to its stack at the
 * `initialize` step runs as on the SDK's stack (the first added outermost;
 * `context.commandName` the base command's name, `args.input` the command's
 * input as given): the tests' fault and counting middleware all sit there.
 * Any other step has no counterpart here, and adding one throws.
 */
export function directClient(call: StoreCall, intercept?: Intercept): DynamoDBDocumentClient {
  const initialize: Initialize[] = [];
  /**
   * lib-dynamodb's marshalling steps resolved once per command class (building a stack for every call was about
   * 2 % of an exploration's CPU): they read only the class's key nodes and the input they are handed.
   */
  const handlers = new Map<unknown, (args: never) => Promise<unknown>>();
  const marshalled = (document: DocumentCommand, operation: string) => {
    let handler = handlers.get(document.constructor);
    if (!handler) {
      // Placed around stand-ins for the two SDK steps they are relative to.
      const stack = constructStack<object, object>();
      stack.add((next) => (args) => next(args), { step: 'serialize', name: 'serializerMiddleware' });
      stack.add((next) => (args) => next(args), { step: 'deserialize', name: 'deserializerMiddleware' });
      document.addMarshallingMiddleware({ translateConfig: { marshallOptions: { ...TRANSLATE.marshallOptions } } });
      // The command's stack (`middlewareStack`) holds them now; concat resolves them against the stand-ins.
      const merged = stack.concat(document.middlewareStack as typeof stack);
      handler = merged.resolve(async (args) => ({ output: (await answer(call, operation, (args as { input: unknown }).input)) as object, response: {} }), {} as never) as (args: never) => Promise<unknown>;
      handlers.set(document.constructor, handler);
    }
    return handler;
  };
  const client = {
    async send(command: AnyCommand): Promise<unknown> {
      const document = command instanceof DynamoDBDocumentClientCommand ? (command as unknown as DocumentCommand) : undefined;
      const name = document ? document.clientCommand.constructor.name : command.constructor.name;
      const operation = name.replace(/Command$/, '');
      const send = async (input: Record<string, unknown>): Promise<{ output: unknown }> => {
        if (!document) return { output: await answer(call, operation, input) };
        return (await marshalled(document, operation)({ input } as never)) as { output: unknown };
      };
      const sent: Handler = ({ input }) => (intercept ? intercept(name, input, () => send(input)) : send(input));
      const context = { clientName: 'DynamoDBClient', commandName: name };
      const handler = initialize.reduceRight<Handler>((next, middleware) => middleware(next, context), sent);
      const { output } = await handler({ input: command.input });
      return output;
    },
    destroy: () => undefined,
    middlewareStack: {
      add: (middleware: Initialize, options?: { step?: string }) => {
        if ((options?.step ?? 'initialize') !== 'initialize') throw new Error(`the direct dynalite client runs initialize middleware only, not ${options?.step}: use the SDK path (SCHEDULES_TRANSPORT=sdk)`);
        initialize.push(middleware);
      },
    },
  };
  // Only send (and destroy) are used by the change path and the explorations' checks.
  return client as unknown as DynamoDBDocumentClient;
}

/** The operation's answer as the SDK's deserializer leaves it, or the SDK's exception for the store's error. */
async function answer(call: StoreCall, operation: string, body: unknown): Promise<unknown> {
  const { status, json } = await call(operation, body);
  const $metadata = { httpStatusCode: status, attempts: 1, totalRetryDelay: 0 };
  if (status === 200) return { ...json, $metadata };
  const name = String(json.__type ?? 'UnknownError').split('#').pop()!;
  const message = String(json.message ?? json.Message ?? name);
  const Exception = (dynamodb as unknown as Record<string, unknown>)[name];
  if (typeof Exception === 'function' && (Exception as { prototype: unknown }).prototype instanceof dynamodb.DynamoDBServiceException) {
    throw new (Exception as new (opts: object) => Error)({ message, $metadata });
  }
  throw new dynamodb.DynamoDBServiceException({ name, $fault: status >= 500 ? 'server' : 'client', message, $metadata });
}
