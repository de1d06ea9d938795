/**
 * A conditional write whose condition did not hold: for the applier, the key
 * manager and the recount an expected answer ("someone newer got there"), not
 * an error. Matched by name too, since errors that crossed a module or SDK
 * copy boundary fail `instanceof`.
 */
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';

export const isConditionFailure = (error: unknown): boolean =>
  error instanceof ConditionalCheckFailedException || (error as { name?: string } | null)?.name === 'ConditionalCheckFailedException';
