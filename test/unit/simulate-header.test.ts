import { describe, expect, it } from 'vitest';
import { MAX_SIMULATED_DELAY_MS, parseSimulation } from '../../src/http/simulate-header';

describe('the WP-Sandbox-Simulate header (pure)', () => {
  it.each([
    ['503', { delayMs: 0, failure: 503 }],
    ['500', { delayMs: 0, failure: 500 }],
    ['429', { delayMs: 0, failure: 429 }],
    ['delay=250', { delayMs: 250 }],
    ['delay=2000, 503', { delayMs: 2000, failure: 503 }],
    [' 429 ,delay=0', { delayMs: 0, failure: 429 }],
    [`delay=${MAX_SIMULATED_DELAY_MS}`, { delayMs: MAX_SIMULATED_DELAY_MS }],
  ])('reads %j', (value, simulation) => {
    expect(parseSimulation(value)).toEqual(simulation);
  });

  it.each(['', '404', '503,500', 'delay=', 'delay=-1', `delay=${MAX_SIMULATED_DELAY_MS + 1}`, 'delay=1e3', 'slow'])(
    'refuses %j',
    (value) => {
      expect(parseSimulation(value)).toBeUndefined();
    },
  );
});
