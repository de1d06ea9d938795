import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { ConfigError, configFromEnv } from '../../mcp/config.js';

const KEY = 'pk_test_0123456789abcdefghijklmnopqrstuv';

describe('MCP adapter configuration', () => {
  it('has the documented defaults', () => {
    expect(configFromEnv({ PUBLIC_API_KEY: KEY })).toEqual({
      apiKey: KEY,
      baseUrl: 'http://127.0.0.1:3000/api/public/v1',
      timeoutMs: 15000,
      retryAttempts: 2,
      retryDelayMs: 250,
      tools: ['list-events', 'get-event', 'search-events'],
    });
  });

  it('reads every setting', () => {
    expect(
      configFromEnv({
        PUBLIC_API_KEY: KEY,
        PUBLIC_API_BASE_URL: 'https://api.example.com/api/public/v1/',
        PUBLIC_API_TIMEOUT_MS: '5000',
        PUBLIC_API_RETRY_ATTEMPTS: '0',
        PUBLIC_API_RETRY_DELAY_MS: '10',
        PUBLIC_EVENTS_MCP_TOOLS: 'list-events,get-event',
      }),
    ).toEqual({ apiKey: KEY, baseUrl: 'https://api.example.com/api/public/v1', timeoutMs: 5000, retryAttempts: 0, retryDelayMs: 10, tools: ['list-events', 'get-event'] });
  });

  it('reports every invalid value by its variable name, never echoing the key', () => {
    let error: unknown;
    try {
      configFromEnv({ PUBLIC_API_KEY: 'short key', PUBLIC_API_BASE_URL: 'ftp://x', PUBLIC_API_TIMEOUT_MS: '-5', PUBLIC_API_RETRY_ATTEMPTS: 'two', PUBLIC_API_RETRY_DELAY_MS: '1.5' });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const text = (error as ConfigError).message;
    for (const name of ['PUBLIC_API_KEY', 'PUBLIC_API_BASE_URL', 'PUBLIC_API_TIMEOUT_MS', 'PUBLIC_API_RETRY_ATTEMPTS', 'PUBLIC_API_RETRY_DELAY_MS']) {
      expect(text).toContain(name);
    }
    expect(text).not.toContain('short key');
  });

  it('PUBLIC_EVENTS_MCP_TOOLS: every subset, in every order, spaces and repeats ignored, listed in the adapter\'s order; unset or empty: all three', () => {
    const names = ['list-events', 'get-event', 'search-events'] as const;
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...names), { minLength: 1, maxLength: 6 }), fc.array(fc.constantFrom('', ' ', '  '), { minLength: 12, maxLength: 12 }), (picked, pads) => {
        const value = picked.map((n, i) => `${pads[2 * i]}${n}${pads[2 * i + 1]}`).join(',');
        expect(configFromEnv({ PUBLIC_API_KEY: KEY, PUBLIC_EVENTS_MCP_TOOLS: value }).tools).toEqual(names.filter((n) => picked.includes(n)));
      }),
    );
    for (const unset of [undefined, '', '  ']) expect(configFromEnv({ PUBLIC_API_KEY: KEY, PUBLIC_EVENTS_MCP_TOOLS: unset }).tools).toEqual([...names]);
  });

  it.each([
    ['list-events,search_events', 'unknown tool "search_events"'],
    ['List-Events', 'unknown tool "List-Events"'],
    ['list-events,,get-event', 'an empty name'],
    ['list-events;get-event', 'unknown tool "list-events;get-event"'],
  ])('PUBLIC_EVENTS_MCP_TOOLS=%s stops it at start, naming the variable and the tools it has', (value, said) => {
    expect(() => configFromEnv({ PUBLIC_API_KEY: KEY, PUBLIC_EVENTS_MCP_TOOLS: value })).toThrow(
      `PUBLIC_EVENTS_MCP_TOOLS names ${said}: give a comma-separated list of list-events, get-event, search-events`,
    );
  });

  it('requires the key', () => {
    expect(() => configFromEnv({})).toThrow(/PUBLIC_API_KEY is required/);
  });
});
