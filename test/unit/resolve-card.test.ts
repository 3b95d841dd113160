import { describe, expect, it } from 'vitest';
import { resolveCard, type CardDeps, type CardOwner } from '../../src/cards/resolve-card';
import type { CardDetails } from '../../src/cards/token-card';
import { parseMerchantConfig, type EntityConfig } from '../../src/merchants/merchant-config';
import type { TokenView } from '../../src/tokens/token-resource';
import { indexOf } from './bin-fixture';

/** The merchant's live tokens, as their objects would answer them (by merchant and id). */
class MemoryTokens {
  readonly tokens = new Map<string, { token: TokenView; card: CardDetails }>();
}

const NOW = Date.parse('2026-11-24T12:00:00Z');
const BASE = 'https://edge.test';
const index = indexOf(
  '457136,,visa|dankort,debit,Danske Bank,DK,consumer,notPrepaidOrNonAnonymous,,pan',
  '371449,,amex,credit,Amex Bank,US,consumer,,,pan',
);
const entities = parseMerchantConfig({
  merchants: [
    {
      username: 'm',
      entities: {
        pci: { pciCompliant: true, threeDS: true, brands: 'all', currencies: 'all' },
        nonpci: { pciCompliant: false, threeDS: true, brands: 'all', currencies: 'all' },
        visaOnly: { pciCompliant: true, threeDS: true, brands: ['visa'], currencies: 'all' },
      },
    },
  ],
}).merchant('m')!.entities;
const owner = (entity: string, username = 'm'): CardOwner => ({
  username,
  entity: entities.get(entity) as EntityConfig,
});

function deps(kv: MemoryTokens): CardDeps {
  return {
    binIndex: index,
    baseUrl: BASE,
    now: NOW,
    tokenCard: (username, tokenId) => {
      const found = kv.tokens.get(tokenId);
      return Promise.resolve(found?.token.username === username ? found : undefined);
    },
  };
}

function storeToken(kv: MemoryTokens, tokenId: string, cardNumber: string, expiry = { month: 12, year: 2035 }) {
  const token: TokenView = {
    tokenId,
    username: 'm',
    fingerprint: 'f',
    maskedCardNumber: 'x',
    cardExpiryDate: expiry,
    brands: ['visa'],
    description: 'd',
    tokenExpiryDateTime: '2027-01-01T00:00:00Z',
    createdAt: NOW,
    expiresAt: NOW + 86_400_000,
  };
  kv.tokens.set(tokenId, { token, card: { cardNumber, cardExpiryDate: expiry, cardHolderName: 'Ada' } });
  return Promise.resolve();
}

const VISA = '4571360000000006';
const AMEX = '371449635398431';

describe('card resolution (pure, over tokens in memory)', () => {
  it('resolves a card number: its BIN match, brands and masked number', async () => {
    const card = await resolveCard(
      deps(new MemoryTokens()),
      owner('pci'),
      { type: 'card/front', cardNumber: VISA },
      { hrefPath: '$.x' },
    );
    expect(card.ok && card.value).toMatchObject({
      cardNumber: VISA,
      masked: '457136******0006',
      bin: '457136',
      brands: ['visa', 'dankort'],
      match: { source: 'data' },
    });
  });

  it('applies the rules in order: PCI for a card number (where asked), then the brand', async () => {
    const front = { type: 'card/front' as const, cardNumber: AMEX };
    const rules = { hrefPath: '$.x', pciFeature: 'lookups by full card number' };
    expect(await resolveCard(deps(new MemoryTokens()), owner('nonpci'), front, rules)).toEqual({
      ok: false,
      failure: { kind: 'merchantNotConfigured', feature: 'lookups by full card number' },
    });
    expect(await resolveCard(deps(new MemoryTokens()), owner('visaOnly'), front, rules)).toEqual({
      ok: false,
      failure: { kind: 'paymentInstrumentNotSupported' },
    });
    // Without the PCI rule (3DS takes card numbers from any entity), only the brand counts.
    expect((await resolveCard(deps(new MemoryTokens()), owner('nonpci'), front, { hrefPath: '$.x' })).ok).toBe(true);
  });

  it('resolves a network token number as a card number, marked as a network token', async () => {
    const expiry = { month: 5, year: 2035 };
    const input = {
      type: 'card/networkToken' as const,
      tokenNumber: VISA,
      cardExpiryDate: expiry,
      cardHolderName: 'Ada',
    };
    const card = await resolveCard(deps(new MemoryTokens()), owner('pci'), input, { hrefPath: '$.x' });
    expect(card.ok && card.value).toMatchObject({
      cardNumber: VISA,
      masked: '457136******0006',
      bin: '457136',
      brands: ['visa', 'dankort'],
      cardExpiryDate: expiry,
      cardHolderName: 'Ada',
      networkToken: true,
    });
    expect(card.ok && card.value).not.toHaveProperty('tokenNumber');
    // The card number's rules: the PCI rule where asked, the brand rule.
    const amex = { ...input, tokenNumber: AMEX };
    expect(
      await resolveCard(deps(new MemoryTokens()), owner('nonpci'), amex, { hrefPath: '$.x', pciFeature: 'f' }),
    ).toEqual({ ok: false, failure: { kind: 'merchantNotConfigured', feature: 'f' } });
    expect(await resolveCard(deps(new MemoryTokens()), owner('visaOnly'), amex, { hrefPath: '$.x' })).toEqual({
      ok: false,
      failure: { kind: 'paymentInstrumentNotSupported' },
    });
  });

  it('answers binNotFound before the brand rule when asked to require a match', async () => {
    const unknown = { type: 'card/front' as const, cardNumber: '9999999999999995' };
    expect(
      await resolveCard(deps(new MemoryTokens()), owner('visaOnly'), unknown, { hrefPath: '$.x', requireMatch: true }),
    ).toEqual({
      ok: false,
      failure: { kind: 'binNotFound' },
    });
  });

  it("opens the merchant's own live token, for any entity, with the stored cardholder name", async () => {
    const kv = new MemoryTokens();
    await storeToken(kv, 'T1', VISA);
    const card = await resolveCard(
      deps(kv),
      owner('nonpci'),
      { type: 'card/tokenized', href: `${BASE}/tokens/T1` },
      { hrefPath: '$.x' },
    );
    expect(card.ok && card.value).toMatchObject({ cardNumber: VISA, tokenId: 'T1', cardHolderName: 'Ada' });
  });

  it.each<[string, (kv: MemoryTokens) => Promise<void>, string, unknown]>([
    ['a token of another service', async () => {}, 'https://elsewhere.example/tokens/T1', 'bodyDoesNotMatchSchema'],
    ['an unknown token', async () => {}, `${BASE}/tokens/T9`, 'tokenNotFound'],
    ["another merchant's token", (kv) => storeToken(kv, 'T1', VISA), `${BASE}/tokens/T1`, 'tokenNotFound'],
    [
      'a token whose card has expired',
      (kv) => storeToken(kv, 'T1', VISA, { month: 10, year: 2026 }),
      `${BASE}/tokens/T1`,
      'underlyingPaymentInstrumentExpired',
    ],
  ])('refuses %s', async (name, seed, href, kind) => {
    const kv = new MemoryTokens();
    await seed(kv);
    const who = name === "another merchant's token" ? owner('pci', 'someone-else') : owner('pci');
    const card = await resolveCard(deps(kv), who, { type: 'card/tokenized', href }, { hrefPath: '$.token' });
    expect(card.ok ? undefined : card.failure.kind).toBe(kind);
  });
});
