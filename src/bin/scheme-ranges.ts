import { orderBrands, type Brand } from './model';

/** An IIN range of a card scheme, as digit prefixes of equal length ('2221'–'2720'). */
export interface SchemeRange {
  from: string;
  to: string;
  brands: Brand[];
}

/**
 * The IIN ranges of the card schemes: what a card number's leading digits say about its brand
 * when no data row knows the BIN. Compiled into the index by `npm run build:data`, and read by the
 * Worker itself to recognise card numbers in free text (src/cards/card-number-in-text.ts) (docs/bin-data.md "The scheme table"). Ranges overlap on purpose; the narrowest one
 * that matches wins, so a specific range (Elo's 504175) can sit inside a broad one (Maestro 50).
 *
 * Every line says where its digits come from. The schemes publish few of their tables openly;
 * the sources, most authoritative first:
 * - [D1] Discover Network's IIN range table (Acquirer Operating Regulations release 9.2, VAR
 *   alert of September 2009), the routing table for Discover, Diners Club and the partner
 *   networks Discover accepts; [D2] Discover Global Network, "IIN Range Summary", 3Q2021 IPP
 *   compliance update (August 2021).
 * - [MC] the Mastercard Rules BIN appendix (p. 73, p. 79) and Mastercard's 2-series notice
 *   (222100–272099), as transcribed in activemerchant/active_merchant's credit_card_methods.rb.
 * - [AM] activemerchant/active_merchant credit_card_methods.rb for schemes it cites (JCB's
 *   legacy ranges, Cabal, Elo's BIN CSV); [BT] braintree/credit-card-type (MIT), whose
 *   maintainers accept only ranges with scheme documentation; [JP] juspay/card-validator (an
 *   Indian PSP) for RuPay, for which NPCI publishes no list; [W] Wikipedia's "Payment card
 *   number" IIN table, used only where nothing better exists, and marked so.
 * No primary list was found from NPCI (RuPay), NSPK (Mir), BKM (Troy), Interswitch (Verve),
 * JCB, Visa or Amex; their lines name the best secondary source.
 *
 * Cartes Bancaires, girocard, Bancomat, mada, Interac and EBT ride on another scheme's BINs or
 * on issuer BINs: only data rows (or data/overrides.csv) name them.
 */
export const SCHEME_RANGES: readonly SchemeRange[] = [
  // UATP: ISO/IEC 7812 major industry identifier 1 (airlines), 15 digits [W; bendrucker/creditcards-types].
  { from: '1', to: '1', brands: ['uatp'] },
  // JCB's legacy 15-digit ranges, inside MII 1 and 2 [BT; PayU's card-type docs].
  { from: '1800', to: '1800', brands: ['jcb'] },
  { from: '2131', to: '2131', brands: ['jcb'] },
  // Mir (NSPK) [BT; bendrucker/creditcards-types]; no NSPK list found.
  { from: '2200', to: '2204', brands: ['mir'] },
  // Mastercard 2-series, 222100–272099 [MC; Braintree's 2-series notice].
  { from: '2221', to: '2720', brands: ['mastercard'] },
  // Diners Club International [D1, D2]; 36 cards may be 14 digits long. (Wikipedia's older "309"
  // is wrong: 3088–3094 and 3096–3102 are JCB in D2.)
  { from: '300', to: '305', brands: ['diners'] },
  { from: '3095', to: '3095', brands: ['diners'] },
  { from: '36', to: '36', brands: ['diners'] },
  { from: '38', to: '39', brands: ['diners'] },
  // JCB: 3528–3589 [D1, BT]; the legacy 8-digit ranges [D2 for 3088–3094 and 3096–3102; AM (PR
  // 4038) for all five, the digits agreeing].
  { from: '3088', to: '3094', brands: ['jcb'] },
  { from: '3096', to: '3102', brands: ['jcb'] },
  { from: '3112', to: '3120', brands: ['jcb'] },
  { from: '3158', to: '3159', brands: ['jcb'] },
  { from: '3337', to: '3349', brands: ['jcb'] },
  { from: '3528', to: '3589', brands: ['jcb'] },
  // American Express [BT, AM, D1 lists it as a partner]; no Amex page found. (RuPay-JCB
  // co-branded cards have no published BIN list: only data rows name them.)
  { from: '34', to: '34', brands: ['amex'] },
  { from: '37', to: '37', brands: ['amex'] },
  // Hipercard / Hiper (Itaú): single BINs [AM HIPERCARD_RANGES; BT]. Mastercard's rules list some of
  // them as Mastercard ranges: these are Hipercard-branded cards on them.
  { from: '384100', to: '384100', brands: ['hipercard'] },
  { from: '384140', to: '384140', brands: ['hipercard'] },
  { from: '384160', to: '384160', brands: ['hipercard'] },
  { from: '606282', to: '606282', brands: ['hipercard'] },
  { from: '637095', to: '637095', brands: ['hipercard'] },
  { from: '637568', to: '637568', brands: ['hipercard'] },
  { from: '637599', to: '637599', brands: ['hipercard'] },
  { from: '637609', to: '637609', brands: ['hipercard'] },
  { from: '637612', to: '637612', brands: ['hipercard'] },
  // Visa [BT, AM, D1 partner table].
  { from: '4', to: '4', brands: ['visa'] },
  // Dankort: domestic 5019 [bendrucker/creditcards-types; AM]; Visa/Dankort 4571 [W only].
  { from: '4571', to: '4571', brands: ['visa', 'dankort'] },
  { from: '5019', to: '5019', brands: ['dankort'] },
  // Elo (Brazil), Elo's published BIN list as reproduced in [BT] (AM's copy of Elo's CSV differs
  // in a few single BINs).
  { from: '401178', to: '401179', brands: ['elo'] },
  { from: '431274', to: '431274', brands: ['elo'] },
  { from: '438935', to: '438935', brands: ['elo'] },
  { from: '451416', to: '451416', brands: ['elo'] },
  { from: '457393', to: '457393', brands: ['elo'] },
  { from: '457631', to: '457632', brands: ['elo'] },
  { from: '504175', to: '504175', brands: ['elo'] },
  { from: '506699', to: '506778', brands: ['elo'] },
  { from: '509000', to: '509999', brands: ['elo'] },
  { from: '627780', to: '627780', brands: ['elo'] },
  { from: '636297', to: '636297', brands: ['elo'] },
  { from: '636368', to: '636368', brands: ['elo'] },
  { from: '650031', to: '650033', brands: ['elo'] },
  { from: '650035', to: '650051', brands: ['elo'] },
  { from: '650405', to: '650439', brands: ['elo'] },
  { from: '650485', to: '650538', brands: ['elo'] },
  { from: '650541', to: '650598', brands: ['elo'] },
  { from: '650700', to: '650718', brands: ['elo'] },
  { from: '650720', to: '650727', brands: ['elo'] },
  { from: '650901', to: '650978', brands: ['elo'] },
  { from: '651652', to: '651679', brands: ['elo'] },
  { from: '655000', to: '655019', brands: ['elo'] },
  { from: '655021', to: '655058', brands: ['elo'] },
  // Mastercard 51–55 [MC, D1 partner table].
  { from: '51', to: '55', brands: ['mastercard'] },
  // Maestro: the broad fallbacks 50 and 56–59 [BT, bendrucker; MC lists sub-ranges of them], and
  // Mastercard Rules' 630400–630499 (Ireland's former Laser), 639000–639099, 670000–679999, and
  // the single BINs 606126 and 608710 that sit inside RuPay's 6061–6089 [MC].
  { from: '50', to: '50', brands: ['maestro'] },
  { from: '56', to: '59', brands: ['maestro'] },
  { from: '6304', to: '6304', brands: ['maestro'] },
  { from: '6390', to: '6390', brands: ['maestro'] },
  { from: '67', to: '67', brands: ['maestro'] },
  { from: '606126', to: '606126', brands: ['maestro'] },
  { from: '608710', to: '608710', brands: ['maestro'] },
  // Carnet (Mexico): 606333 [AM], inside RuPay's 6061–6089.
  { from: '606333', to: '606333', brands: ['carnet'] },
  // Verve (Interswitch) [W; BT lists subsets of both]. Wikipedia's third range, 650002–650027,
  // is left out: it lies inside Discover's 65 [D1] and nothing else supports it.
  { from: '506099', to: '506198', brands: ['verve'] },
  { from: '507865', to: '507964', brands: ['verve'] },
  // RuPay (NPCI publishes no list): 508500–508999 [JP]; 6061–6089 [didww's IIN table; JP's
  // narrower 606985–607984 and 608001–608500 lie inside it; the Maestro and Carnet BINs above are
  // carved out]; 652150–653149 [JP]; 8172–8201 [JP: 817200–820199; didww], UnionPay below it.
  { from: '5085', to: '5089', brands: ['rupay'] },
  { from: '6061', to: '6089', brands: ['rupay'] },
  { from: '652150', to: '653149', brands: ['rupay'] },
  { from: '8172', to: '8201', brands: ['rupay'] },
  // Cabal (Argentina) [AM CABAL_RANGES]: 60420100–60440099 (UkrCard's range ends at 60420099
  // [W]), and single BINs, one of them 8 digits inside Discover's 65.
  { from: '604201', to: '604400', brands: ['cabal'] },
  { from: '589657', to: '589657', brands: ['cabal'] },
  { from: '603522', to: '603522', brands: ['cabal'] },
  { from: '650272', to: '650272', brands: ['cabal'] },
  { from: '65008700', to: '65008700', brands: ['cabal'] },
  // Discover [D1]: 6011's five sub-ranges, 644–649, 65.
  { from: '601100', to: '601109', brands: ['discover'] },
  { from: '601120', to: '601149', brands: ['discover'] },
  { from: '601174', to: '601174', brands: ['discover'] },
  { from: '601177', to: '601179', brands: ['discover'] },
  { from: '601186', to: '601199', brands: ['discover'] },
  { from: '644', to: '649', brands: ['discover'] },
  { from: '65', to: '65', brands: ['discover'] },
  // UnionPay: 62 [BT, D1] (622126–622925, 624–626 and 6282–6288 are UnionPay cards that Discover's
  // network accepts [D1], not Discover cards); 81000000–81719999 [AM, citing Discover's IPP
  // compliance document; BT].
  { from: '62', to: '62', brands: ['unionPay'] },
  { from: '8100', to: '8171', brands: ['unionPay'] },
  // Troy (BKM, Türkiye) [bendrucker/creditcards-types; BT].
  { from: '9792', to: '9792', brands: ['troy'] },
];

interface CompiledRange {
  start: number;
  end: number;
  brands: readonly Brand[];
}

/** Ranges as 8-digit key intervals, narrowest first, so the first hit is the most specific. */
const COMPILED: readonly CompiledRange[] = SCHEME_RANGES.map((r) => ({
  start: Number(r.from.padEnd(8, '0')),
  end: Number(r.to.padEnd(8, '9')),
  brands: r.brands,
})).sort((a, b) => a.end - a.start - (b.end - b.start));

/**
 * The brands the scheme table gives to a BIN prefix: those of the narrowest range containing it,
 * ordered as the API lists them; [] when no scheme claims the digits.
 *
 * @example schemeBrandsFor('457100') // ['visa', 'dankort']
 * @example schemeBrandsFor('99999999') // []
 */
export function schemeBrandsFor(digits: string): Brand[] {
  if (!/^\d{1,8}$/.test(digits)) return [];
  const key = Number(digits.padEnd(8, '0'));
  const hit = COMPILED.find((r) => r.start <= key && key <= r.end);
  return hit ? orderBrands(hit.brands) : [];
}

/**
 * The card number lengths each scheme issues today, for recognising a card number in free text
 * (src/cards/card-number-in-text.ts). Sources as for the ranges above: Visa 16 and 19 (its
 * 13-digit numbers are no longer issued, and a 13-digit run is more often a phone number with
 * its country code); Mastercard 16; American Express 15; Diners Club 14–19; Discover, JCB (16–19,
 * its legacy 1800/2131 ranges 15), UnionPay, Mir and Verve 16–19; Maestro 16–19 (its 12–15-digit
 * numbers are a rare legacy, and 12-digit international phone numbers of +57, +58, +593, +595 and
 * +63 start like them); UATP 15. A
 * scheme not listed issues 16–19.
 */
const ISSUED_LENGTHS: Partial<Record<Brand, readonly number[]>> = {
  visa: [16, 19],
  mastercard: [16],
  amex: [15],
  diners: [14, 15, 16, 17, 18, 19],
  jcb: [15, 16, 17, 18, 19],
  maestro: [16, 17, 18, 19],
  uatp: [15],
  elo: [16],
  hipercard: [16, 19],
  dankort: [16],
  rupay: [16],
  troy: [16],
  cabal: [16],
  carnet: [16],
};
const DEFAULT_LENGTHS: readonly number[] = [16, 17, 18, 19];

/**
 * Whether the scheme table recognises these digits as a card number: a scheme's IIN range holds
 * its leading digits and that scheme issues numbers of this length.
 *
 * @example schemeIssues('4444333322221111') // true: Visa, 16 digits
 * @example schemeIssues('444433332222111') // false: Visa issues no 15-digit numbers
 * @example schemeIssues('9999999999999995') // false: no scheme's range
 */
export function schemeIssues(digits: string): boolean {
  const brands = schemeBrandsFor(digits.slice(0, 8));
  return brands.some((brand) => (ISSUED_LENGTHS[brand] ?? DEFAULT_LENGTHS).includes(digits.length));
}
