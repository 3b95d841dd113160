import { BRANDS, type Brand } from '../../src/bin/model';
import { labelKey } from './label-key';

/**
 * Spellings of brand labels met in the public BIN lists, keyed by {@link labelKey}. Every API
 * name of model.ts is added below as well, so "cartesBancaires" or "eftposAU" map to themselves.
 * Labels that only say what kind of card it is ("private label", "local", "fuel card") are left
 * out on purpose: the scheme range table decides those.
 */
const SPELLINGS: Readonly<Record<string, readonly Brand[]>> = {
  visainc: ['visa'],
  visainternational: ['visa'],
  mastercard: ['mastercard'],
  mc: ['mastercard'],
  master: ['mastercard'],
  mastercardworldwide: ['mastercard'],
  // Eurocard merged into Mastercard (Europay, 2002); old lists still carry the name.
  eurocard: ['mastercard'],
  eurocardmastercard: ['mastercard'],
  maestrouk: ['maestro'],
  maestrodebit: ['maestro'],
  // UK Switch was rebranded Maestro in 2002.
  switch: ['maestro'],
  americanexpress: ['amex'],
  americanexpresscompany: ['amex'],
  amexco: ['amex'],
  dinersclub: ['diners'],
  dinersclubinternational: ['diners'],
  dinersclubintl: ['diners'],
  dinersinternational: ['diners'],
  discovercard: ['discover'],
  discovernetwork: ['discover'],
  novus: ['discover'],
  japancreditbureau: ['jcb'],
  chinaunionpay: ['unionPay'],
  cup: ['unionPay'],
  unionpayinternational: ['unionPay'],
  nspkmir: ['mir'],
  mirnspk: ['mir'],
  eftpos: ['eftposAU'],
  eftposaustralia: ['eftposAU'],
  cb: ['cartesBancaires'],
  cartebancaire: ['cartesBancaires'],
  cartebleue: ['cartesBancaires'],
  // PagoBancomat is the debit brand of the Bancomat circuit.
  pagobancomat: ['bancomat'],
  // German "ec-Karte" is the former name of girocard.
  eckarte: ['girocard'],
  eccard: ['girocard'],
  tarjetanaranja: ['naranja'],
  naranjax: ['naranja'],
  tarjetacencosud: ['cencosud'],
  gecapitalbank: ['gecapital'],
  gemoney: ['gecapital'],
  // BC Card's international brand (Korea).
  bccard: ['bc'],
  globalbc: ['bc'],
  carteaurore: ['aurore'],
  hiper: ['hipercard'],
  troycard: ['troy'],
  vervecard: ['verve'],
  jaywancard: ['jaywan'],
};

/**
 * Product names that imply their scheme without being one ("ELECTRON" is a Visa card). As a
 * brand label they give the scheme; in binlist's product column they stay a product.
 */
const PRODUCT_SPELLINGS: Readonly<Record<string, readonly Brand[]>> = {
  visaelectron: ['visa'],
  electron: ['visa'],
  vpay: ['visa'],
  visadebit: ['visa'],
  visacredit: ['visa'],
  visaprepaid: ['visa'],
  mastercarddebit: ['mastercard'],
};

const SCHEME_TABLE: ReadonlyMap<string, readonly Brand[]> = new Map([
  ...BRANDS.map((brand): [string, readonly Brand[]] => [labelKey(brand), [brand]]),
  ...Object.entries(SPELLINGS),
]);

const TABLE: ReadonlyMap<string, readonly Brand[]> = new Map([...SCHEME_TABLE, ...Object.entries(PRODUCT_SPELLINGS)]);

/** The outcome of reading one brand label: the brands it names and the parts that name none. */
export interface BrandLabelMatch {
  brands: Brand[];
  unmappedParts: string[];
}

/**
 * Maps one brand label as a source wrote it to API brand names. A label the table does not know
 * as a whole is split on "/" (co-badged cards are written "Visa/Dankort", "jcb/rupay"), and each
 * part is looked up on its own.
 *
 * @example resolveBrandLabel('Visa/Dankort') // { brands: ['visa', 'dankort'], unmappedParts: [] }
 * @example resolveBrandLabel('private label') // { brands: [], unmappedParts: ['private label'] }
 */
export function resolveBrandLabel(label: string): BrandLabelMatch {
  return resolveWith(label, TABLE);
}

function resolveWith(label: string, table: ReadonlyMap<string, readonly Brand[]>): BrandLabelMatch {
  const trimmed = label.trim();
  const whole = table.get(labelKey(trimmed));
  if (whole) return { brands: [...whole], unmappedParts: [] };
  const brands: Brand[] = [];
  const unmappedParts: string[] = [];
  for (const part of trimmed
    .split('/')
    .map((p) => p.trim())
    .filter((p) => p !== '')) {
    const found = table.get(labelKey(part));
    if (found) brands.push(...found);
    else unmappedParts.push(part);
  }
  return { brands, unmappedParts };
}

/**
 * The brands a label names as schemes, ignoring product names such as "ELECTRON": used by
 * importers whose brand column mixes co-badged schemes ("Visa/Dankort") with products ("GOLD").
 *
 * @example schemeBrandsOfLabel('Visa/Dankort') // ['visa', 'dankort']
 * @example schemeBrandsOfLabel('ELECTRON') // []
 */
export function schemeBrandsOfLabel(label: string): Brand[] {
  return resolveWith(label, SCHEME_TABLE).brands;
}
