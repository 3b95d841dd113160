import artifact from '../../data/bin-index.bin';
import merchantsJson from '../../data/merchants.json';
import { BinIndex } from '../bin/bin-index';
import type { Services } from '../http/endpoint';
import { parseMerchantConfig } from '../merchants/merchant-config';

/**
 * The services a deployed Worker is built from: the BIN index compiled by `npm run build:data`
 * (bundled as a Data module; wrapping it only makes typed-array views, so doing it at module load
 * costs microseconds and fails the Worker loudly at start-up if the artifact is corrupt) and the
 * merchant configuration of data/merchants.json (validated at load: a malformed file fails
 * start-up and the tests, never a request). For `live`, every 3-D Secure entity must have its
 * requestor block.
 */
export function embeddedServices(options: { live: boolean }): Services {
  return {
    binIndex: BinIndex.fromArrayBuffer(artifact),
    merchants: parseMerchantConfig(merchantsJson, options),
  };
}
