import { BIN_INDEX } from '../../bin/default-index';
import type { Brand } from '../../bin/model';
import { brandAllowed, type EntityConfig, type MerchantConfig } from '../../config/merchants';
import { fail } from '../../http/errors';
import { maskPan } from '../../http/log';
import type { RequestContext } from '../../http/pipeline';
import { ThreeDsStore, type SessionScope } from '../../storage/threeds-store';
import { hmacSha256 } from '../../threeds/hmac';
import { JwtKeyMissing, signingKey } from '../../threeds/jwt';
import type { PaymentInstrument } from '../../threeds/schemas';
import { entityOf } from '../entity';
import { foreignTokenHref, publicBaseUrl } from '../links';
import { cardBehindToken } from '../token-access';

/** What every 3DS step needs once its body is valid. */
export interface ThreeDsContext {
  entity: EntityConfig;
  scope: SessionScope;
  store: ThreeDsStore;
  key: Uint8Array;
  baseUrl: string;
  now: number;
}

/**
 * Business rules common to the 3DS steps (CONTRACT.md §2 step 6, §5): the entity must be this
 * merchant's and have 3DS enabled; the JWT key must be configured.
 */
export function threeDsContext(
  merchant: MerchantConfig, entityId: string, transactionReference: string, rc: RequestContext,
): ThreeDsContext {
  const entity = entityOf(merchant, entityId, rc);
  if (!entity.threeDS) fail({ kind: 'merchantNotConfigured', feature: '3-D Secure' });
  return {
    entity,
    scope: { username: merchant.username, entity: entityId, transactionReference },
    store: new ThreeDsStore(rc.env.SESSIONS),
    key: jwtKey(rc.env),
    baseUrl: publicBaseUrl(rc),
    now: Date.now(),
  };
}

export function jwtKey(env: Env): Uint8Array {
  try {
    return signingKey(env.JWT_SIGNING_KEY || undefined);
  } catch (e) {
    if (e instanceof JwtKeyMissing) fail({ kind: 'misconfigured', what: e.message });
    throw e;
  }
}

/** The card behind a payment instrument: brands, 6-digit BIN and cardholder name. */
export interface CardFacts {
  brands: Brand[];
  bin: string;
  cardHolderName?: string;
}

/**
 * Resolves the instrument to card facts and applies the entity's brand rule. `jsonPath` locates
 * the instrument in the request, for the error on a token href that is not ours.
 */
export async function cardFacts(
  instrument: PaymentInstrument, merchant: MerchantConfig, ctx: ThreeDsContext, jsonPath: string, rc: RequestContext,
): Promise<CardFacts> {
  let card: { cardNumber: string; cardHolderName?: string };
  if (instrument.type === 'card/tokenized') {
    const error = foreignTokenHref(instrument.href, ctx.baseUrl, `${jsonPath}.href`);
    if (error) fail({ kind: 'bodyDoesNotMatchSchema', errors: [error] });
    // Behaves as the card behind the token, whose stored cardholder name drives the test scenarios.
    card = await cardBehindToken(rc, merchant, instrument.href, ctx.baseUrl);
  } else {
    card = instrument;
    rc.log.card = maskPan(card.cardNumber);
  }
  const brands = BIN_INDEX.find(card.cardNumber)?.record.brands ?? [];
  if (!brandAllowed(ctx.entity, brands)) fail({ kind: 'paymentInstrumentNotSupported' });
  return { brands: [...brands], bin: card.cardNumber.slice(0, 6), cardHolderName: card.cardHolderName };
}

/**
 * A keyed hash (HMAC-SHA256, hex) of a validated request, to recognise an identical retry
 * without storing the request: it may hold a card number, and an unkeyed hash of a card number
 * can be brute-forced.
 */
export async function requestHash(key: Uint8Array, request: unknown): Promise<string> {
  const mac = await hmacSha256(key, JSON.stringify(request));
  return Array.from(mac, (b) => b.toString(16).padStart(2, '0')).join('');
}

/** A stable, opaque organisation unit id per merchant entity, for the JWTs' OrgUnitId. */
export async function orgUnitId(scope: SessionScope): Promise<string> {
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(`${scope.username}:${scope.entity}`));
  return Array.from(new Uint8Array(digest).slice(0, 12), (b) => b.toString(16).padStart(2, '0')).join('');
}

export const THREEDS_PATH = '/verifications/customers/3ds';
