/**
 * The JSON envelope (spec §2.1) for every response, and the one place errors
 * become responses: exposed HttpErrors keep their status and message; a
 * store throttle that lasted (isThrottle: the SDK's retries and the store's
 * own backed-off attempts used up) is a 503 with Retry-After, logged as a
 * warning; anything else is logged and answered with a generic 500 (no
 * stack, no query, no table).
 */
import type { MiddlewareObj } from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { MESSAGES, ServiceBusyError, ValidationError, isHttpError } from '../core/errors.js';
import type { Pagination } from '../core/pagination.js';
import { isThrottle } from '../store/table/throttling.js';
import { errorFields, type Logger } from './logger.js';

export const JSON_HEADERS = { 'content-type': 'application/json', 'x-content-type-options': 'nosniff' } as const;

export interface Success {
  message: string;
  data: unknown;
  /** Top-level pagination beside `data` (PRODUCT P8). */
  pagination?: Pagination;
}

export function jsonResponse(statusCode: number, body: unknown, headers: Record<string, string> = {}): APIGatewayProxyResult {
  return { statusCode, headers: { ...JSON_HEADERS, ...headers }, body: JSON.stringify(body) };
}

export function successResponse(s: Success, headers: Record<string, string> = {}): APIGatewayProxyResult {
  return jsonResponse(200, { success: true, message: s.message, data: s.data, ...(s.pagination ? { pagination: s.pagination } : {}) }, headers);
}

export function errorBody(message: string, errors?: ValidationError['errors']) {
  return { success: false as const, message, ...(errors ? { errors } : {}) };
}

/** Renders any thrown value as an envelope response. */
export function errorResponse(error: unknown, logger: Logger, fields: Record<string, unknown> = {}): APIGatewayProxyResult {
  if (isHttpError(error)) {
    const errors = error instanceof ValidationError ? error.errors : undefined;
    return jsonResponse(error.statusCode, errorBody(error.message, errors), error.headers);
  }
  if (isThrottle(error)) {
    logger.warn('Store throttled; answered 503', { ...fields, ...errorFields(error) });
    return errorResponse(new ServiceBusyError(), logger, fields);
  }
  logger.error('Unhandled error', { ...fields, ...errorFields(error) });
  return jsonResponse(500, errorBody(MESSAGES.internal));
}

export function envelopeErrors(logger: Logger): MiddlewareObj<APIGatewayProxyEvent, APIGatewayProxyResult> {
  return {
    onError: (request) => {
      request.response = errorResponse(request.error, logger, {
        requestId: request.context.awsRequestId,
        resource: request.event.resource,
      });
    },
  };
}
