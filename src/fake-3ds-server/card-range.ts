import type { EmvVersion } from '../emv/emv-rules';
import type { CardRangeData } from './messages';
import { schemeFor, type Scenario } from './scenarios';
import { acsMethodUrl } from './urls';

/**
 * The card range data /preauth answers for a scenario: the ACS's and the DS's version ranges,
 * the 3DS Method URL when the ACS has one, and the per-version list 3dsecure.io added in 2024.
 */

/** The 3DS Method URL the card range names for one ACS version, if the ACS has a method. */
export function methodUrlFor(scenario: Scenario, origin: string, version: EmvVersion): string | undefined {
  if (scenario.method === 'none') return undefined;
  return acsMethodUrl(origin, scenario.versions.methodUrlPerVersion ? version : undefined);
}

/**
 * The CRD of a prepared transaction. Where each version has its own method URL, the top-level
 * `threeDSMethodURL` is the oldest version's, so a requestor that ignores the per-version list
 * for a newer version invokes the wrong method (and its threeDSCompInd is refused).
 *
 * @example
 * ```ts
 * cardRangeData(scenarioFor(card)!, { threeDSServerTransID, acctNumber: card, origin: 'https://fake.test' });
 * ```
 */
export function cardRangeData(
  scenario: Scenario,
  p: { threeDSServerTransID: string; acctNumber: string; origin: string },
): CardRangeData {
  const { acs, ds } = scenario.versions;
  const first = acs[0]!;
  const topMethodUrl = methodUrlFor(scenario, p.origin, first);
  return {
    messageType: 'CRD',
    threeDSServerTransID: p.threeDSServerTransID,
    acsStartProtocolVersion: first,
    acsEndProtocolVersion: acs.at(-1)!,
    dsStartProtocolVersion: ds[0]!,
    dsEndProtocolVersion: ds.at(-1)!,
    ...(topMethodUrl !== undefined ? { threeDSMethodURL: topMethodUrl } : {}),
    acsProtocolVersions: acs.map((version) => {
      const url = methodUrlFor(scenario, p.origin, version);
      return { version, ...(url !== undefined ? { threeDSMethodURL: url } : {}) };
    }),
    scheme: schemeFor(p.acctNumber),
  };
}
