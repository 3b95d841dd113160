// Receives the events card-edge posts to your endpoint (docs/events.md): each delivery verified
// with a Standard Webhooks library (`npm install standardwebhooks`), then an event older than the
// last one processed for its subject dropped. Copy it into your receiver (Node 20+).
//
//   const receive = eventReceiver(process.env.CARD_EDGE_EVENTS_SECRET); // whsec_…, from POST /events/endpoints
//   http.createServer((request, response) => { /* read the raw body, then: */
//     try { const event = receive(body, request.headers); if (event) handle(event); response.writeHead(204).end(); }
//     catch { response.writeHead(400).end(); } // not card-edge's, or more than 5 minutes old
//   });
//
// `body` is the body exactly as received (a string): it is parsed only once it is verified.
/* global Headers */
import { Webhook } from 'standardwebhooks';

/**
 * The event of a delivery, once its `webhook-signature` is one of `secret`'s over its
 * `webhook-id`, `webhook-timestamp` (within 5 minutes of your clock) and body; throws otherwise.
 * While card-edge rotates the secret it signs with both: either one verifies.
 *
 * @param {string} body the request body as received
 * @param {Record<string, string> | Headers} headers the request headers
 * @param {string} secret the endpoint's secret, `whsec_…`
 */
export function verifyDelivery(body, headers, secret) {
  return new Webhook(secret).verify(body, headers instanceof Headers ? Object.fromEntries(headers) : headers);
}

/**
 * A receiver: verifies each delivery and returns its event, or undefined for one whose `sequence`
 * is lower than the last processed for its `subject` (a later change arrived first: this one is
 * stale). Keep `lastSequence` (subject → sequence) in your database, beside what the events change.
 *
 * @param {string} secret the endpoint's secret
 * @param {Map<string, number>} [lastSequence]
 */
export function eventReceiver(secret, lastSequence = new Map()) {
  return (body, headers) => {
    const event = verifyDelivery(body, headers, secret);
    if (event.sequence < (lastSequence.get(event.subject) ?? -Infinity)) return undefined;
    lastSequence.set(event.subject, event.sequence);
    return event;
  };
}
