import type { Failure } from '../failures';
import type { ApiVersion } from '../media-types';

/**
 * What the version of the Tokens API a request negotiated (docs/pipeline.md step 3) changes in its
 * answers (docs/tokens.md "Versions"). Only what Worldpay's v3 Tokens document clearly says
 * differs: every other error is the same in every version.
 */

/**
 * The failure of `POST /tokens` for a version. An entity that may not tokenize (it is not PCI
 * compliant, and a token takes a card number) is, in Worldpay's v3 Tokens document, a 500
 * `tokenizationNotEnabled`; versions 1 and 2 keep the service's business-rule 400
 * `merchantIsNotConfigured` (docs/pipeline.md step 6).
 *
 * @example
 * ```ts
 * createFailureFor({ kind: 'merchantNotConfigured', feature: 'card numbers' }, 3); // { kind: 'tokenizationNotEnabled' }
 * ```
 */
export function createFailureFor(failure: Failure, version: ApiVersion): Failure {
  return version >= 3 && failure.kind === 'merchantNotConfigured' ? { kind: 'tokenizationNotEnabled' } : failure;
}
