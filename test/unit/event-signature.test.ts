import { describe, expect, it } from 'vitest';
import { verifyEventSignature } from '../../examples/verify-event-signature.mjs';
import { eventSignature } from '../../src/events/event-signature';

/**
 * The receiver's example (examples/verify-event-signature.mjs, docs/events.md) on Node, against the
 * service's own signing (src/events/event-signature.ts); test/worker/events.test.ts checks it in
 * workerd against signed requests the EventLog sent.
 */

const SECRET = 'whsec_unit_current_secret_0123456789';
const OLD = 'whsec_unit_previous_secret_0123456789';
const BODY =
  '{"eventId":"evt_1","eventType":"ping","createdAt":"2026-11-26T12:00:00.000Z","merchant":{"entity":"default"},"data":{}}';
const T = 1_795_314_600;

describe('event signatures', () => {
  it('signs "<t>.<body>" with HMAC-SHA256, one v1 per secret, as hex', async () => {
    const header = await eventSignature([SECRET, OLD], T, BODY);
    expect(header).toMatch(/^t=1795314600,v1=[0-9a-f]{64},v1=[0-9a-f]{64}$/);
    const { createHmac } = await import('node:crypto');
    const expected = createHmac('sha256', SECRET).update(`${T}.${BODY}`).digest('hex');
    expect(header.split(',')[1]).toBe(`v1=${expected}`);
  });

  it('verifies on Node: any v1 of the header, any of the receiver secrets, within 5 minutes', async () => {
    const header = await eventSignature([SECRET, OLD], T, BODY);
    expect(await verifyEventSignature(BODY, header, SECRET, T)).toBe(true);
    expect(await verifyEventSignature(BODY, header, [OLD], T + 300)).toBe(true);
    expect(await verifyEventSignature(BODY, header, SECRET, T - 300)).toBe(true);
    expect(await verifyEventSignature(BODY, header, SECRET, T + 301)).toBe(false);
    expect(await verifyEventSignature(BODY, header, 'whsec_someone_else_0123456789abcdef', T)).toBe(false);
    expect(await verifyEventSignature(`${BODY} `, header, SECRET, T)).toBe(false);
    expect(await verifyEventSignature(BODY, 'v1=00', SECRET, T)).toBe(false);
    expect(await verifyEventSignature(BODY, `t=${T}`, SECRET, T)).toBe(false);
    expect(await verifyEventSignature(BODY, header.toUpperCase(), SECRET, T)).toBe(false);
    // Uses the current time when none is given: a fresh signature passes.
    const now = Math.floor(Date.now() / 1000);
    expect(await verifyEventSignature(BODY, await eventSignature([SECRET], now, BODY), SECRET)).toBe(true);
  });
});
