import type { PreparedCard } from './live-state';
import { hmacHex } from '../hmac-derived-values';
import { chooseVersion } from './emv-versions';
import type { ThreeDsServer } from './three-ds-server';
import { logLine, redactPans } from '../../log';

/**
 * Preparing a card at the 3DS Server provider (docs/threeds.md "Live": "Preparing the card"): its
 * card range data, the transaction id the AReq will carry, the protocol version and the 3DS
 * Method URL, or that no Directory Server knows the card. What is kept names the card by a keyed
 * hash, never by its number.
 */

/** The keyed hash that tells whether a prepared card is the card being authenticated. */
export function cardHashOf(key: Uint8Array<ArrayBuffer>, cardNumber: string): Promise<string> {
  return hmacHex(key, `live-card:${cardNumber}`);
}

/**
 * Prepares the card: one /preauth call. Throws ProviderUnavailable (503) or a refused key (500).
 * `baseUrl` is the base of the notification URLs: when it is http, 2.3.1 (https notification
 * URLs only) is never chosen, and a warning is logged each time a range offered it.
 */
export async function prepareCard(
  key: Uint8Array<ArrayBuffer>,
  provider: ThreeDsServer,
  cardNumber: string,
  baseUrl: string,
): Promise<PreparedCard> {
  // The provider keeps a preparation 80 s from when it made it: count from before the call.
  const preparedAt = Date.now();
  const cardHash = await cardHashOf(key, cardNumber);
  const prepared = await provider.prepare({ acctNumber: cardNumber });
  if (prepared.kind === 'notEnrolled') return { kind: 'notEnrolled', preparedAt, cardHash };
  if (prepared.kind === 'refused') {
    const { errorCode, errorComponent, errorDescription } = prepared.erro;
    // The provider's free text is kept (in the owner, and in the log line) with card numbers masked.
    const why = `preparation refused: Erro ${errorCode} from ${errorComponent} (${redactPans(errorDescription)})`;
    return { kind: 'unsupported', why, preparedAt, cardHash };
  }
  const httpsNotifications = baseUrl.startsWith('https://');
  const choice = chooseVersion(prepared.crd, { httpsNotifications });
  if (!choice) {
    if (!httpsNotifications && chooseVersion(prepared.crd)?.version === '2.3.1') {
      warnNotHttps(baseUrl, undefined);
      const why = 'the range offers only EMV 2.3.1, which takes https notification URLs, and the base is http';
      return { kind: 'unsupported', why, preparedAt, cardHash };
    }
    return { kind: 'unsupported', why: 'no protocol version in common', preparedAt, cardHash };
  }
  if (choice.notHttps) warnNotHttps(baseUrl, choice.version);
  return {
    kind: 'prepared',
    threeDSServerTransID: prepared.crd.threeDSServerTransID,
    preparedAt,
    cardHash,
    version: choice.version,
    ...(choice.methodUrl ? { methodUrl: choice.methodUrl } : {}),
  };
}

/**
 * The log line of a preparation that stayed below 2.3.1 (or found no version) because the notification URLs are http
 * (docs/configuration.md "Live 3-D Secure"): right against the local fake provider, a mistake in a
 * deployment, whose PUBLIC_BASE_URL must be https.
 */
function warnNotHttps(baseUrl: string, version: string | undefined): void {
  logLine({
    level: 'warn',
    event: 'threeds.versionLimited',
    chosenVersion: version ?? 'none',
    baseUrl,
    message:
      `the card range offers EMV 2.3.1, which takes https notification URLs only, and the base ` +
      `${baseUrl} is http: ${version === undefined ? 'no other version is offered (unavailable)' : `${version} is used`}. ` +
      `Set PUBLIC_BASE_URL to an https URL for 2.3.1`,
  });
}
