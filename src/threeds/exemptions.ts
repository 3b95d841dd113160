import { isMastercardFamily, type Brand } from '../bin/model';
import { EXEMPTION_TYPES } from '../schemas/threeds-requests';

/**
 * Exemptions a merchant asks for on `authenticate` (docs/threeds.md "Exemptions", CONTRACT §11):
 * what each is in EMV 3-D Secure for the transaction's protocol version, and the explicit result
 * the answer, GET and the event carry. Pure rules; sources in docs/threeds.md.
 *
 * | exemption | `threeDSRequestorChallengeInd` | since | note |
 * |---|---|---|---|
 * | `TRA` (transaction risk analysis) | 05 | 2.2.0 | also what `noChallengeRequestedTRAPerformed` asks |
 * | `dataOnly` | 06 | 2.2.0 | Mastercard: `messageCategory` 80 (Identity Check Insights), any version |
 * | `scaDelegation` | 07 | 2.2.0 | SCA already performed (delegated) |
 * | `trustedBeneficiary` | 08 | 2.2.0 | trust list (whitelist) |
 * | `lowValue` | 10 | 2.3.1 | up to 30 EUR, 25 GBP (or the entity's limit) |
 * | `secureCorporate` | 11 | 2.3.1 | |
 *
 * A version without the indicator gets `02` (no challenge requested) and the result says
 * `downgraded: true`: it is sent as a plain preference, and so never `applied`.
 */

export { EXEMPTION_TYPES };
export type ExemptionType = (typeof EXEMPTION_TYPES)[number];

const INDICATORS: Record<ExemptionType, { indicator: string; since: '2.2.0' | '2.3.1' }> = {
  TRA: { indicator: '05', since: '2.2.0' },
  dataOnly: { indicator: '06', since: '2.2.0' },
  scaDelegation: { indicator: '07', since: '2.2.0' },
  trustedBeneficiary: { indicator: '08', since: '2.2.0' },
  lowValue: { indicator: '10', since: '2.3.1' },
  secureCorporate: { indicator: '11', since: '2.3.1' },
};

/** What the AReq says for an exemption. */
export interface ExemptionSent {
  threeDSRequestorChallengeInd: string;
  messageCategory: '01' | '80';
}

/** The explicit result on the answer, GET and the event. */
export interface ExemptionResult {
  requested: ExemptionType;
  sent: ExemptionSent;
  /** The issuer granted it (ARes `I`, a 2.3.1 `transChallengeExemption` naming it, a data-only answer). */
  applied: boolean;
  /** The version has no indicator for it: sent as `02`. */
  downgraded: boolean;
}

/** Whether a protocol version has an indicator (1.0.2, 2.1.0 have none of these). */
function hasIndicator(type: ExemptionType, version: string): boolean {
  const since = INDICATORS[type].since;
  return version === '2.3.1' || (since === '2.2.0' && version === '2.2.0');
}

/** What to send for an exemption in a version, for a card of these brands. */
export function exemptionToSend(
  type: ExemptionType,
  version: string,
  brands: readonly Brand[],
): { sent: ExemptionSent; downgraded: boolean } {
  const has = hasIndicator(type, version);
  // Data only on Mastercard is its own message category, in every 2.x version.
  const categoryDataOnly = type === 'dataOnly' && isMastercardFamily(brands) && version !== '1.0.2';
  return {
    sent: {
      threeDSRequestorChallengeInd: has ? INDICATORS[type].indicator : '02',
      messageCategory: categoryDataOnly ? '80' : '01',
    },
    downgraded: !has && !categoryDataOnly,
  };
}

/** What the AReq carries for the exemption asked: the type, what is sent, and whether it was downgraded. */
export interface ExemptionAsked {
  requested: ExemptionType;
  sent: ExemptionSent;
  downgraded: boolean;
}

/** The exemption a request asks for: `exemption.type`, or TRA as `noChallengeRequestedTRAPerformed` asks it. */
export function exemptionOf(request: {
  exemption?: { type: ExemptionType } | undefined;
  challenge: { preference: string };
}): ExemptionType | undefined {
  return (
    request.exemption?.type ?? (request.challenge.preference === 'noChallengeRequestedTRAPerformed' ? 'TRA' : undefined)
  );
}

/**
 * The result once the issuer answered (live): granted when the ARes or RReq says `I`, when a 2.3.1
 * `transChallengeExemption` names it, or (data only) when the answer's reason is 80, data only.
 */
export function exemptionResult(
  asked: ExemptionAsked,
  answer: { transStatus?: string; transStatusReason?: string; transChallengeExemption?: string },
): ExemptionResult {
  const granted =
    !asked.downgraded &&
    (asked.requested === 'dataOnly'
      ? answer.transStatusReason === '80'
      : answer.transStatus === 'I' || answer.transChallengeExemption === INDICATORS[asked.requested].indicator);
  return { ...asked, applied: granted };
}

/** The indicator of an exemption (what a 2.3.1 ACS names in `transChallengeExemption` when it grants it). */
export function exemptionIndicator(type: ExemptionType): string {
  return INDICATORS[type].indicator;
}

/** Low value: the schemes' limits per currency, in minor units (PSD2 RTS art. 16; docs/threeds.md "Exemptions"). */
export const LOW_VALUE_LIMITS: Readonly<Record<string, number>> = { EUR: 3_000, GBP: 2_500 };

/**
 * Why low value cannot be asked for this amount (undefined when it can): above the limit of its
 * currency, the schemes' (EUR, GBP) or the entity's own for another currency; refused in a
 * currency with neither.
 */
export function lowValueProblem(
  amount: number,
  currency: string,
  entityLimits: Readonly<Record<string, number>> = {},
): string | undefined {
  const limit = entityLimits[currency] ?? LOW_VALUE_LIMITS[currency];
  if (limit === undefined)
    return `Low value has no limit in ${currency}: set one for the entity, or ask for another exemption.`;
  if (amount > limit) return `Low value is for amounts up to ${limit} (minor units) in ${currency}.`;
  return undefined;
}

/** The Mastercard ECIs of an exemption (06: acquirer exemption) and of data only (04); 07 for the others. */
export function exemptionEci(brands: readonly Brand[], dataOnly: boolean): string {
  if (!isMastercardFamily(brands)) return '07';
  return dataOnly ? '04' : '06';
}
