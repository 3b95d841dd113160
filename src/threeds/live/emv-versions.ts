import { EMV_VERSIONS, type CardRangeData, type EmvVersion } from './emv-messages';

/**
 * The protocol version of a live authentication (docs/threeds.md "Live"): the highest version
 * that the card range's ACS, its Directory Server and this service all support, 2.2.0 and 2.3.1
 * first; 2.1.0 only for a range that supports nothing newer. 2.3.1 only when the notification
 * URLs are https, as EMV 2.3.1 requires: with an http base (local development) a range that offers
 * 2.3.1 gets the next version down, and the choice says so. The 3DS Method URL is the chosen
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
  /**
   * Set when the range offers 2.3.1 and an older version was chosen because the notification
   * URLs are http, which EMV 2.3.1 refuses (`notificationURL` and `threeDSMethodNotificationURL`
   * are https only there).
   */
  notHttps?: '2.3.1';
}

/** What the choice depends on besides the range: whether the notification URLs are https. */
export interface VersionOptions {
  /** False when the service's notification URLs would be http: no 2.3.1 then. Default true. */
  httpsNotifications?: boolean;
}

/**
 * The version to use for a card range, or undefined when this service shares none with it.
 *
 * @example
 * ```ts
 * chooseVersion({ acsStartProtocolVersion: '2.1.0', acsEndProtocolVersion: '2.2.0', ... }); // { version: '2.2.0', ... }
 * ```
 */
export function chooseVersion(crd: CardRangeData, options: VersionOptions = {}): VersionChoice | undefined {
  const listed = crd.acsProtocolVersions?.map((p) => p.version);
  const offered = EMV_VERSIONS.filter(
    (v) =>
      within(v, crd.acsStartProtocolVersion, crd.acsEndProtocolVersion) &&
      within(v, crd.dsStartProtocolVersion, crd.dsEndProtocolVersion) &&
      (crd.dsProtocolVersions === undefined || crd.dsProtocolVersions.includes(v)) &&
      (listed === undefined || listed.includes(v)),
  );
  const usable = options.httpsNotifications === false ? offered.filter((v) => v !== '2.3.1') : offered;
  const version = usable.at(-1);
  if (version === undefined) return undefined;
  const notHttps = offered.at(-1) === '2.3.1' && version !== '2.3.1' ? { notHttps: '2.3.1' as const } : {};
  const methodUrl = crd.acsProtocolVersions
    ? crd.acsProtocolVersions.find((p) => p.version === version)?.threeDSMethodURL
    : crd.threeDSMethodURL;
  return { version, ...(methodUrl ? { methodUrl } : {}), ...notHttps };
}
