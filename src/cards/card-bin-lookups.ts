import type { BinIndex } from '../bin/bin-index';
import { toCardBinData, type CardBinData } from '../bin/card-bin-data';
import { lookupPrefix, type PrefixBinData } from '../bin/prefix-lookup';
import { failed, ok, type Result } from '../failures';
import { brandRule, entityRule } from '../merchants/entity-rules';
import type { MerchantConfig } from '../merchants/merchant-config';
import { resolveCard, type CardDeps, type ResolvedCard } from './resolve-card';

/**
 * The two card BIN lookups as domain steps (docs/card-bin.md), each applying the business rules
 * in order: panLookup by card number or token, binLookup by 6–8 leading digits.
 */

export type PanLookupInput = { cardNumber: string; token?: undefined } | { token: string; cardNumber?: undefined };

/**
 * panLookup: the entity, then the card (a card number needs a PCI-compliant entity; a token is
 * open to any entity, since the merchant never handles the number), then the BIN index (404
 * binNotFound when nothing matches), then the brand rule.
 */
export async function lookupCard(
  deps: CardDeps,
  merchant: MerchantConfig,
  entityId: string,
  input: PanLookupInput,
): Promise<Result<{ answer: CardBinData; card: ResolvedCard }>> {
  const entity = entityRule(merchant, entityId);
  if (!entity.ok) return entity;
  const card = await resolveCard(
    deps,
    { username: merchant.username, entity: entity.value },
    input.token !== undefined
      ? { type: 'card/tokenized', href: input.token }
      : { type: 'card/front', cardNumber: input.cardNumber },
    { hrefPath: '$.token', pciFeature: 'lookups by full card number', requireMatch: true },
  );
  if (!card.ok) return card;
  return ok({ answer: toCardBinData(card.value.cardNumber, card.value.match!), card: card.value });
}

/**
 * binLookup: the entity (any entity: a prefix is not a card number), then what every card under
 * the prefix shares (404 binNotFound when nothing does), then the brand rule on the brands they
 * share.
 */
export function lookupBin(
  binIndex: BinIndex,
  merchant: MerchantConfig,
  entityId: string,
  bin: string,
): Result<PrefixBinData> {
  const entity = entityRule(merchant, entityId);
  if (!entity.ok) return entity;
  const answer = lookupPrefix(binIndex, bin);
  if (!answer) return failed({ kind: 'binNotFound' });
  if (answer.brand !== undefined) {
    const brand = brandRule(entity.value, answer.brand);
    if (!brand.ok) return brand;
  }
  return ok(answer);
}
