import merchantsJson from '../../data/merchants.json';
import { settingsOf } from '../config/settings';
import type { EventEndpoint } from '../merchants/event-endpoints';
import { parseMerchantConfig, type MerchantDirectory } from '../merchants/merchant-config';
import { DELIVERY_TIMEOUT_MS } from './delivery-rules';

/**
 * What the EventLog object (src/events/event-log.ts) reaches outside itself: the outbound
 * request, its deadline, the clock, and a merchant's endpoints and signing secrets. A seam for the
 * tests only, like `objectStorage`: they put an in-test receiver in place of the network, a short
 * deadline for a receiver that hangs, and a clock they move forward to drive retries and the
 * retry window without waiting (the objects run in the tests' isolate). Nothing in the service
 * changes it.
 */

const merchants = new Map<boolean, MerchantDirectory>();

/**
 * The same configuration the Worker loads (src/app/embedded-services.ts), with the same rules for
 * its environment (in `live`, no http endpoint at all), parsed once per isolate.
 */
function embeddedMerchants(env: Env): MerchantDirectory {
  const live = settingsOf(env).environment === 'live';
  let directory = merchants.get(live);
  if (!directory) merchants.set(live, (directory = parseMerchantConfig(merchantsJson, { live })));
  return directory;
}

export const eventTransport = {
  /** Sends one delivery (`redirect: 'manual'`: a redirect is an answer, not followed). */
  fetch: (request: Request): Promise<Response> => fetch(request),
  /** A delivery's deadline: a 2xx later than this is a failed attempt. */
  timeoutMs: DELIVERY_TIMEOUT_MS,
  /** The objects' clock for events: due times, the retry window, retention, signature timestamps. */
  now: (): number => Date.now(),
  /** A merchant's endpoints (data/merchants.json), read at each append, redelivery and attempt. */
  endpointsOf: (env: Env, username: string): readonly EventEndpoint[] =>
    embeddedMerchants(env).merchant(username)?.events.endpoints ?? [],
  /**
   * A merchant's signing secrets (EVENT_SIGNING_SECRETS), current first; none: nothing can be sent.
   * Throws a SettingsError when the Worker's environment is broken.
   */
  secretsOf: (env: Env, username: string): readonly string[] => settingsOf(env).eventSigningSecrets.get(username) ?? [],
};
