import { outcomeOfStatus, type AttemptOutcome } from './delivery-rules';
import { eventSignature } from './event-signature';
import { eventTransport } from './event-transport';

/**
 * One attempt of a delivery (docs/events.md "Delivery"): the event's body posted to the endpoint,
 * signed with each secret, through `eventTransport` with its deadline; a redirect is an answer,
 * not followed. The answer's body is never read (nor logged). Never throws: a failure is an outcome.
 */
export async function sendEvent(endpoint: string, body: string, secrets: readonly string[]): Promise<AttemptOutcome> {
  const t = Math.floor(eventTransport.now() / 1000);
  const controller = new AbortController();
  const request = new Request(endpoint, {
    method: 'POST',
    headers: {
      'Content-Type': 'application/json',
      'Event-Signature': await eventSignature(secrets, t, body),
      'User-Agent': 'card-edge-events/1',
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
  try {
    const answer = await Promise.race([sent, deadline]);
    if (answer === 'timeout') {
      controller.abort();
      // A late answer is not read: its connection is let go.
      sent.then(discard, () => {});
      return { delivered: false, error: 'timeout' };
    }
    discard(answer);
    return outcomeOfStatus(answer.status);
  } catch {
    return { delivered: false, error: 'network' };
  } finally {
    clearTimeout(timer);
  }
}

function discard(response: Response): void {
  response.body?.cancel().catch(() => {});
}
