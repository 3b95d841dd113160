import { tokenKeys } from '../cards/card-crypto';
import { openCard, type CardDetails } from '../cards/token-card';
import { settingsOf } from '../config/settings';
import type { EventType } from '../events/event-types';
import { FailureError } from '../failures';
import type { TokenRecord } from '../records/token-record';
import type { EventOutbox, StagedEvent } from '../storage/event-outbox';
import { tokenReference } from './token-ids';
import { tokenResource } from './token-resource';

/**
 * A token's events (docs/events.md): its update, extension or deletion, staged by its object in
 * the same synchronous block as the change, with the token as it then was (its card sealed until
 * the event leaves); what each says when it leaves: the token as GET shows it.
 */

export class TokenEvents {
  constructor(
    private readonly env: Env,
    private readonly objectId: string,
    private readonly outbox: () => EventOutbox<EventType>,
  ) {}

  /** Stages an event about a token (its data rendered when it leaves: {@link render}). */
  stage(record: TokenRecord, eventType: EventType, eventId: string): void {
    this.outbox().stage(record.username, {
      eventId,
      eventType,
      subject: record.tokenId,
      createdAt: Date.now(),
      entity: record.entity ?? '',
      facts: record,
    });
  }

  /** An event's data: the token as GET shows it (the card opened, its number masked). */
  async render(event: StagedEvent<EventType>): Promise<Record<string, unknown>> {
    const record = event.facts as TokenRecord;
    const { sealed: _sealed, ...token } = record;
    // A card sealed under a key no longer configured: the event goes without the name and address
    // rather than never (it would hold every later event of this object back).
    const card: Pick<CardDetails, 'cardHolderName' | 'billingAddress'> = await openCard(
      await tokenKeys(settingsOf(this.env)),
      record,
    ).catch((e: unknown) => {
      if (e instanceof FailureError) return {};
      throw e;
    });
    const href = `${record.hrefBase ?? ''}/tokens/${tokenReference(this.objectId, record.tokenId)}`;
    return tokenResource(token, card, href);
  }
}
