import { describe, expect, it } from 'vitest';
import { luhnComplete, panLookup } from './helpers';

/**
 * Known answers from the embedded data (data/binlist/ranges.csv, line numbers in comments),
 * written by hand from the CSV rows, and from the scheme IIN table where no row matches.
 */

const US_CREDIT = {
  type: 'pan',
  fundingType: 'credit',
  countryCode: 'US',
  currency: 'USD',
  anonymousPrepaid: 'notPrepaidOrNonAnonymous',
};
const DK_DEBIT = {
  type: 'pan',
  fundingType: 'debit',
  countryCode: 'DK',
  currency: 'DKK',
  anonymousPrepaid: 'notPrepaidOrNonAnonymous',
  dccAllowed: true,
};
const SCHEME_ONLY = {
  type: 'pan',
  binLength: 6,
  fundingType: 'unknown',
  countryCode: 'unknown',
  anonymousPrepaid: 'unknown',
  dccAllowed: false,
};

const ANSWERS: [string, string, Record<string, unknown>][] = [
  // line 2: 341142,,,AMEX,,CREDIT,,US,AMERICAN EXPRESS
  [
    'an Amex 6-digit BIN',
    luhnComplete('341142', 15),
    { ...US_CREDIT, brand: ['amex'], bin: '341142', binLength: 6, issuerName: 'AMERICAN EXPRESS', dccAllowed: false },
  ],
  // line 4: 360218,,,DINERS,DINERS CLUB INTERNATIONAL,CREDIT,,EC,DINERS CLUB DEL ECUADOR S.A.
  [
    'a Diners BIN in Ecuador (currency USD)',
    luhnComplete('360218', 14),
    {
      type: 'pan',
      brand: ['diners'],
      bin: '360218',
      binLength: 6,
      fundingType: 'credit',
      issuerName: 'DINERS CLUB DEL ECUADOR S.A.',
      countryCode: 'EC',
      currency: 'USD',
      dccAllowed: false,
    },
  ],
  // line 856: 432376,432377,,VISA,,DEBIT,,US,"WELLS FARGO BANK IOWA, NATIONAL ASSOCIATION"
  [
    'the first BIN of a Visa range',
    luhnComplete('432376'),
    {
      brand: ['visa'],
      bin: '432376',
      binLength: 6,
      fundingType: 'debit',
      issuerName: 'WELLS FARGO BANK IOWA, NATIONAL ASSOCIATION',
      countryCode: 'US',
      currency: 'USD',
      dccAllowed: true,
    },
  ],
  [
    'the last BIN of a Visa range',
    luhnComplete('432377', 16, '9'),
    { brand: ['visa'], bin: '432377', binLength: 6, issuerName: 'WELLS FARGO BANK IOWA, NATIONAL ASSOCIATION' },
  ],
  // line 2771: 45713684,,16,VISA,Visa/Dankort,DEBIT,,DK,Danske Bank
  [
    'a co-badged Visa/Dankort 8-digit BIN',
    luhnComplete('45713684'),
    { ...DK_DEBIT, brand: ['visa', 'dankort'], bin: '45713684', binLength: 8, issuerName: 'Danske Bank' },
  ],
  // line 3442: 45716188,45716194,16,VISA,Visa/Dankort,DEBIT,,DK,Sparekassen Kronjylland
  [
    'inside an 8-digit range',
    luhnComplete('45716190'),
    { ...DK_DEBIT, brand: ['visa', 'dankort'], bin: '45716190', binLength: 8, issuerName: 'Sparekassen Kronjylland' },
  ],
  // line 1785: 45710800 (Flemløse Sparekasse) inside line 1784: 457108 (Handelsbanken)
  [
    'an 8-digit row over its 6-digit BIN (8 beats 6)',
    luhnComplete('45710800'),
    { ...DK_DEBIT, brand: ['visa', 'dankort'], bin: '45710800', binLength: 8, issuerName: 'Flemløse Sparekasse' },
  ],
  [
    'the 6-digit BIN where no 8-digit row covers it',
    luhnComplete('45710801'),
    { ...DK_DEBIT, brand: ['visa'], bin: '457108', binLength: 6, issuerName: 'Handelsbanken' },
  ],
  // line 1330: 453748,,,VISA,,DEBIT,y,CA,SCOTIABANK
  [
    'a prepaid Visa',
    luhnComplete('453748'),
    {
      brand: ['visa'],
      bin: '453748',
      fundingType: 'prepaid',
      anonymousPrepaid: 'unknown',
      issuerName: 'SCOTIABANK',
      countryCode: 'CA',
      currency: 'CAD',
    },
  ],
  // line 4263: 467726,,,VISA,MONEY MART TITANIUM+,DEBIT,y,CA,PEOPLES TRUST COMPANY
  [
    'a prepaid Visa with a product label',
    luhnComplete('467726'),
    { brand: ['visa'], fundingType: 'prepaid', category: 'consumer', issuerName: 'PEOPLES TRUST COMPANY' },
  ],
  // line 460: 410131,,,VISA,ELECTRON,DEBIT,,XK,PROCREDIT BANK
  [
    'a Visa Electron (a consumer product) in Kosovo (currency EUR)',
    luhnComplete('410131'),
    {
      brand: ['visa'],
      fundingType: 'debit',
      category: 'consumer',
      countryCode: 'XK',
      currency: 'EUR',
      issuerName: 'PROCREDIT BANK',
    },
  ],
  // line 5806: 670686,,,MASTERCARD,Maestro,DEBIT,,DE,Fidor Bank AG
  [
    'a Maestro card listed under the Mastercard scheme (not DCC-eligible)',
    luhnComplete('670686'),
    {
      brand: ['maestro'],
      fundingType: 'debit',
      countryCode: 'DE',
      currency: 'EUR',
      issuerName: 'Fidor Bank AG',
      dccAllowed: false,
    },
  ],
  // line 5037: 525500,,,MASTERCARD,CARTASI GOLD,CREDIT,,IT,CARTASI S.P.A.
  [
    'a Mastercard with a consumer product',
    luhnComplete('525500'),
    {
      brand: ['mastercard'],
      bin: '525500',
      fundingType: 'credit',
      category: 'consumer',
      countryCode: 'IT',
      currency: 'EUR',
      issuerName: 'CARTASI S.P.A.',
      dccAllowed: true,
    },
  ],
  // line 5165: 531265,,,MASTERCARD,,DEBIT,,US,BANK OF AMERICA
  [
    'a Mastercard debit in the US',
    luhnComplete('531265'),
    {
      brand: ['mastercard'],
      fundingType: 'debit',
      issuerName: 'BANK OF AMERICA',
      countryCode: 'US',
      currency: 'USD',
      dccAllowed: true,
    },
  ],
  // line 5363: 542976,,,MASTERCARD,,CREDIT,,BR,ITAU
  [
    'a Mastercard credit in Brazil',
    luhnComplete('542976'),
    { brand: ['mastercard'], fundingType: 'credit', issuerName: 'ITAU', countryCode: 'BR', currency: 'BRL' },
  ],
  // line 1255: 450935,,,VISA,,CREDIT,,MY,STANDARD CHARTERED BANK MALAYSIA BERHAD
  [
    'a Visa credit in Malaysia',
    luhnComplete('450935'),
    { brand: ['visa'], issuerName: 'STANDARD CHARTERED BANK MALAYSIA BERHAD', countryCode: 'MY', currency: 'MYR' },
  ],
  // line 134: 376402,,,AMEX,,CREDIT,,AR,,  (no bank name: issuerName omitted)
  [
    'an Amex row without an issuer name',
    luhnComplete('376402', 15),
    { brand: ['amex'], bin: '376402', countryCode: 'AR', currency: 'ARS' },
  ],
  // Scheme IIN table, where no data row matches.
  ['a Visa number outside the data', luhnComplete('49999999'), { ...SCHEME_ONLY, brand: ['visa'], bin: '499999' }],
  ['a 2-series Mastercard number', luhnComplete('27200000'), { ...SCHEME_ONLY, brand: ['mastercard'], bin: '272000' }],
  ['a UnionPay number', luhnComplete('62000000', 19), { ...SCHEME_ONLY, brand: ['unionPay'], bin: '620000' }],
  ['a JCB number', luhnComplete('35280000'), { ...SCHEME_ONLY, brand: ['jcb'], bin: '352800' }],
  ['a Mir number', luhnComplete('22000000'), { ...SCHEME_ONLY, brand: ['mir'], bin: '220000' }],
  ['a Troy number', luhnComplete('97920000'), { ...SCHEME_ONLY, brand: ['troy'], bin: '979200' }],
  ['a UATP number', luhnComplete('10000000', 15), { ...SCHEME_ONLY, brand: ['uatp'], bin: '100000' }],
  ['an Elo number', luhnComplete('63636800'), { ...SCHEME_ONLY, brand: ['elo'], bin: '636368' }],
];

const OMITTED_WHEN_UNKNOWN = ['issuerName', 'category', 'multipleAccountAccess'];

describe('POST /api/cardBin/panLookup known answers', () => {
  it.each(ANSWERS)('answers %s', async (_name, cardNumber, expected) => {
    const response = await panLookup({ merchant: { entity: 'default' }, cardNumber });
    expect(response.status).toBe(200);
    expect(response.headers.get('Content-Type')).toBe('application/json');
    const body = await response.json<Record<string, unknown>>();
    expect(body).toMatchObject(expected);
    expect(body.bin).toBe(cardNumber.slice(0, body.binLength as number));
    for (const field of OMITTED_WHEN_UNKNOWN) {
      if (!(field in expected)) expect(body, `${field} must be omitted, not invented`).not.toHaveProperty(field);
    }
    expect(JSON.stringify(body)).not.toContain(cardNumber);
  });

  it('answers scheme-only matches without issuer, currency or category', async () => {
    const response = await panLookup({ merchant: { entity: 'default' }, cardNumber: luhnComplete('49999999') });
    expect(Object.keys(await response.json()).sort()).toEqual([
      'anonymousPrepaid',
      'bin',
      'binLength',
      'brand',
      'countryCode',
      'dccAllowed',
      'fundingType',
      'type',
    ]);
  });

  it('lets the limited entity look up a Visa card, which it allows', async () => {
    const response = await panLookup({ merchant: { entity: 'limited' }, cardNumber: luhnComplete('432376') });
    expect(response.status).toBe(200);
  });

  it('lets a co-badged card through when one of its brands is allowed', async () => {
    const response = await panLookup({ merchant: { entity: 'limited' }, cardNumber: luhnComplete('45713684') });
    expect(response.status).toBe(200);
  });

  it('accepts card numbers from 12 to 19 digits', async () => {
    for (const length of [12, 19]) {
      const response = await panLookup({ merchant: { entity: 'default' }, cardNumber: luhnComplete('432376', length) });
      expect(response.status, `length ${length}`).toBe(200);
    }
  });
});
