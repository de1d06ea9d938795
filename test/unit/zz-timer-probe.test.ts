import { it, expect } from '@jest/globals';
it('leaves a timer', () => { setInterval(() => undefined, 300_000); const t = setTimeout(() => undefined, 10); clearTimeout(t); setTimeout(() => undefined, 5).unref(); expect(1).toBe(1); });
