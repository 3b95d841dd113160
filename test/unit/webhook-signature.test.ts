import { describe, expect, it } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { newSecret, signingKey, webhookSignature } from '../../src/events/webhook-signature';

describe('Standard Webhooks signatures', () => {
  it("match the specification's published vector", async () => {
    // The vector of the Standard Webhooks reference libraries' tests (docs/events.md "Test vector").
    const key = await signingKey('whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw');
    expect(await webhookSignature([key], 'msg_p5jXN8AQM9LWM0D4loKWxJek', 1614265330, '{"test": 2432232314}')).toBe(
      'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
    );
  });

  it('verify with the standardwebhooks library under each secret of a rotation, and not under another', async () => {
    const [current, previous, other] = [newSecret(), newSecret(), newSecret()];
    expect(current).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    const body = '{"eventId":"evt_1","eventType":"ping"}';
    const timestamp = Math.floor(Date.now() / 1000);
    const signature = await webhookSignature(
      [await signingKey(current), await signingKey(previous)],
      'evt_1',
      timestamp,
      body,
    );
    expect(signature.split(' ')).toHaveLength(2);
    const headers = { 'webhook-id': 'evt_1', 'webhook-timestamp': String(timestamp), 'webhook-signature': signature };
    expect(new Webhook(current).verify(body, headers)).toEqual(JSON.parse(body));
    expect(new Webhook(previous).verify(body, headers)).toEqual(JSON.parse(body));
    expect(() => new Webhook(other).verify(body, headers)).toThrow();
    expect(() => new Webhook(current).verify(`${body} `, headers)).toThrow();
  });

  it('refuse a string that is not a whsec_ secret', () => {
    expect(() => signingKey('s3cret')).toThrow();
  });
});
