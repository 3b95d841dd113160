import { EMV_VERSIONS, type CardRangeData, type EmvVersion } from './emv-messages';

/**
 * The protocol version of a live authentication (docs/threeds.md "Live"): the highest version
 * that the card range's ACS, its Directory Server and this service all support, 2.2.0 and 2.3.1
 * first; 2.1.0 only for a range that supports nothing newer. The 3DS Method URL is the chosen
 * version's, where the provider lists one per version.
 */

/** Compares dotted versions numerically: negative when a is older. */
export function compareVersions(a: string, b: string): number {
  const [pa, pb] = [a.split('.').map(Number), b.split('.').map(Number)];
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const d = (pa[i] ?? 0) - (pb[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}

const within = (v: string, start: string | undefined, end: string | undefined): boolean =>
  (start === undefined || compareVersions(v, start) >= 0) && (end === undefined || compareVersions(v, end) <= 0);

export interface VersionChoice {
  version: EmvVersion;
  /** The 3DS Method URL for that version, if the ACS has one. */
  methodUrl?: string;
}

/**
 * The version to use for a card range, or undefined when this service shares none with it.
 *
 * @example
 * ```ts
 * chooseVersion({ acsStartProtocolVersion: '2.1.0', acsEndProtocolVersion: '2.2.0', ... }); // { version: '2.2.0', ... }
 * ```
 */
export function chooseVersion(crd: CardRangeData): VersionChoice | undefined {
  const listed = crd.acsProtocolVersions?.map((p) => p.version);
  const usable = EMV_VERSIONS.filter(
    (v) =>
      within(v, crd.acsStartProtocolVersion, crd.acsEndProtocolVersion) &&
      within(v, crd.dsStartProtocolVersion, crd.dsEndProtocolVersion) &&
      (crd.dsProtocolVersions === undefined || crd.dsProtocolVersions.includes(v)) &&
      (listed === undefined || listed.includes(v)),
  );
  const version = usable.at(-1);
  if (version === undefined) return undefined;
  const methodUrl = crd.acsProtocolVersions
    ? crd.acsProtocolVersions.find((p) => p.version === version)?.threeDSMethodURL
    : crd.threeDSMethodURL;
  return { version, ...(methodUrl ? { methodUrl } : {}) };
}
