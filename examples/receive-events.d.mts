/** Types of receive-events.mjs, for the TypeScript that imports it (scripts/bench/events-bench.ts, test/served). */

/** An event as an endpoint receives it (docs/events.md "The body"). */
export interface ReceivedEvent {
  eventId: string;
  eventType: string;
  createdAt: string;
  subject: string;
  sequence: number;
  merchant: { entity: string };
  data: Record<string, unknown>;
}

export function verifyDelivery(body: string, headers: Record<string, string> | Headers, secret: string): ReceivedEvent;

export function eventReceiver(
  secret: string,
  lastSequence?: Map<string, number>,
): (body: string, headers: Record<string, string> | Headers) => ReceivedEvent | undefined;
