import { orderBrands, type Brand } from '../../src/bin/model';
import type { SchemeRange } from './source-row';

/**
 * The IIN ranges of the card schemes: what a card number's leading digits say about its brand
 * when no data row knows the BIN (CONTRACT §3, §7). Ranges overlap on purpose; the narrowest one
 * that matches wins, so a specific range (Elo's 504175) can sit inside a broad one (Maestro 50).
 *
 * Sources, unless a line says otherwise: ISO/IEC 7812 major industry identifiers; the IIN table
 * of Wikipedia's "Payment card number" article (2024); Elo's and Hipercard's published BIN lists
 * as reproduced in braintree/credit-card-type (MIT). Cartes Bancaires, girocard, Bancomat, mada,
 * Interac and EBT are not IIN-based (they ride on another scheme's BINs or on issuer BINs):
 * only data rows can name them.
 */
export const SCHEME_RANGES: readonly SchemeRange[] = [
  // UATP: major industry identifier 1 (airlines) is issued only by UATP.
  { from: '1', to: '1', brands: ['uatp'] },
  // JCB's legacy 15-digit ranges (still listed by the schemes' BIN tables).
  { from: '1800', to: '1800', brands: ['jcb'] },
  { from: '2131', to: '2131', brands: ['jcb'] },
  // Mir (NSPK, Russia).
  { from: '2200', to: '2204', brands: ['mir'] },
  // Mastercard 2-series, opened in 2017.
  { from: '2221', to: '2720', brands: ['mastercard'] },
  // Diners Club International.
  { from: '300', to: '305', brands: ['diners'] },
  { from: '3095', to: '3095', brands: ['diners'] },
  { from: '36', to: '36', brands: ['diners'] },
  { from: '38', to: '39', brands: ['diners'] },
  // American Express.
  { from: '34', to: '34', brands: ['amex'] },
  { from: '37', to: '37', brands: ['amex'] },
  // JCB.
  { from: '3528', to: '3589', brands: ['jcb'] },
  // RuPay-JCB co-branded cards (NPCI) are issued in 353 and 356.
  { from: '353', to: '353', brands: ['jcb', 'rupay'] },
  { from: '356', to: '356', brands: ['jcb', 'rupay'] },
  // Hipercard (Itaú, Brazil).
  { from: '384100', to: '384100', brands: ['hipercard'] },
  { from: '384140', to: '384140', brands: ['hipercard'] },
  { from: '384160', to: '384160', brands: ['hipercard'] },
  { from: '606282', to: '606282', brands: ['hipercard'] },
  { from: '637095', to: '637095', brands: ['hipercard'] },
  { from: '637568', to: '637599', brands: ['hipercard'] },
  { from: '637609', to: '637609', brands: ['hipercard'] },
  { from: '637612', to: '637612', brands: ['hipercard'] },
  // Visa.
  { from: '4', to: '4', brands: ['visa'] },
  // Dankort: Visa/Dankort co-badged cards (Nets, Denmark) and the domestic-only 5019.
  { from: '4571', to: '4571', brands: ['visa', 'dankort'] },
  { from: '5019', to: '5019', brands: ['dankort'] },
  // Elo (Brazil), from Elo's published BIN list.
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
  // Mastercard.
  { from: '51', to: '55', brands: ['mastercard'] },
  // Maestro (Mastercard's debit scheme); 6304 was Ireland's Laser, co-badged Maestro.
  { from: '50', to: '50', brands: ['maestro'] },
  { from: '56', to: '58', brands: ['maestro'] },
  { from: '6304', to: '6304', brands: ['maestro'] },
  { from: '639', to: '639', brands: ['maestro'] },
  { from: '67', to: '67', brands: ['maestro'] },
  // Verve (Interswitch, Nigeria).
  { from: '506099', to: '506198', brands: ['verve'] },
  { from: '507865', to: '507964', brands: ['verve'] },
  { from: '650002', to: '650027', brands: ['verve'] },
  // RuPay (NPCI, India). 81 is left to UnionPay, which holds most of it (8100–8171).
  { from: '508', to: '508', brands: ['rupay'] },
  { from: '60', to: '60', brands: ['rupay'] },
  { from: '652', to: '652', brands: ['rupay'] },
  { from: '82', to: '82', brands: ['rupay'] },
  // Discover; 622126–622925 is the UnionPay range Discover's network also accepts.
  { from: '6011', to: '6011', brands: ['discover'] },
  { from: '644', to: '649', brands: ['discover'] },
  { from: '65', to: '65', brands: ['discover'] },
  { from: '622126', to: '622925', brands: ['discover', 'unionPay'] },
  // UnionPay.
  { from: '62', to: '62', brands: ['unionPay'] },
  { from: '81', to: '81', brands: ['unionPay'] },
  // Troy (BKM, Türkiye).
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
