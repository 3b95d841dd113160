import { outcomeOfStatus, type AttemptOutcome } from './delivery-rules';
import { eventTransport } from './event-transport';
import { webhookSignature } from './webhook-signature';

/**
 * One attempt of a delivery (docs/events.md "Delivery"): the event's body posted to the endpoint
 * with the Standard Webhooks headers, signed with each of the endpoint's valid keys, through
 * `eventTransport` with its deadline; a redirect is an answer, not followed. The answer's body is
 * never read (nor logged). Never throws: a failure is an outcome.
 */
export async function sendEvent(
  url: string,
  eventId: string,
  body: string,
  keys: readonly CryptoKey[],
): Promise<AttemptOutcome> {
  const started = eventTransport.now();
  const timestamp = Math.floor(started / 1000);
  const controller = new AbortController();
  const request = new Request(url, {
    method: 'POST',
    headers: {
      'Content-Type': 'application/json',
      'webhook-id': eventId,
      'webhook-timestamp': String(timestamp),
      'webhook-signature': await webhookSignature(keys, eventId, timestamp, body),
      'User-Agent': 'card-edge-events/2',
    },
    body,
    redirect: 'manual',
    signal: controller.signal,
  });
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), eventTransport.timeoutMs);
  });
  const sent = Promise.resolve().then(() => eventTransport.fetch(request));
  const took = () => Math.max(0, eventTransport.now() - started);
  try {
    const answer = await Promise.race([sent, deadline]);
    if (answer === 'timeout') {
      controller.abort();
      // A late answer is not read: its connection is let go.
      sent.then(discard, () => {});
      return { delivered: false, error: 'timeout', durationMs: took() };
    }
    discard(answer);
    const now = eventTransport.now();
    return { ...outcomeOfStatus(answer.status, answer.headers.get('Retry-After'), now), durationMs: took() };
  } catch {
    return { delivered: false, error: 'network', durationMs: took() };
  } finally {
    clearTimeout(timer);
  }
}

function discard(response: Response): void {
  response.body?.cancel().catch(() => {});
}
