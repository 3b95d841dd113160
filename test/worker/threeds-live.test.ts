import { env } from 'cloudflare:workers';
import { createExecutionContext } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import worker from '../../src/index';
import { authenticateBody, hiddenField, THREEDS, THREEDS_HEADERS } from './threeds-helpers';

type Json = Record<string, any>;

const LIVE = { ...env, ENVIRONMENT: 'live' };

function live(path: string, init: { headers: Record<string, string>; body: string }): Promise<Response> {
  return worker.fetch(
    new Request<unknown, IncomingRequestCfProperties>(`https://edge.test${path}`, { method: 'POST', ...init }),
    LIVE,
    createExecutionContext(),
  );
}

function form(path: string, fields: Record<string, string>): Promise<Response> {
  return live(path, {
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(fields).toString(),
  });
}

describe('3DS in the live environment', () => {
  it('ignores the magic values and applies the risk rules', async () => {
    const response = await live(`${THREEDS}/authenticate`, {
      headers: THREEDS_HEADERS,
      body: JSON.stringify(authenticateBody({ cardHolderName: '3ds2-frictionless-identified' })),
    });
    expect((await response.json<Json>()).outcome).toBe('challenged');
  });

  it('neither shows nor accepts the test code on the challenge page', async () => {
    const auth: Json = await (
      await live(`${THREEDS}/authenticate`, { headers: THREEDS_HEADERS, body: JSON.stringify(authenticateBody()) })
    ).json();
    const page = await (await form('/3ds/challenge', { JWT: auth.challenge.jwt })).text();
    expect(page).not.toContain('1234');
    const afterTestCode = await (
      await form('/3ds/challenge/submit', { state: hiddenField(page, 'state')!, code: '1234', action: 'submit' })
    ).text();
    expect(afterTestCode).toContain('not right');
    expect(afterTestCode).not.toContain('name="TransactionId"');
  });
});
