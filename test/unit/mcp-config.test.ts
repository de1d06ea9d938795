import { describe, expect, it } from '@jest/globals';
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
      }),
    ).toEqual({ apiKey: KEY, baseUrl: 'https://api.example.com/api/public/v1', timeoutMs: 5000, retryAttempts: 0, retryDelayMs: 10 });
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

  it('requires the key', () => {
    expect(() => configFromEnv({})).toThrow(/PUBLIC_API_KEY is required/);
  });
});
