import { MERCHANT_INITIATED } from '../../schemas/threeds-requests';
import { merchantInitiated } from '../../threeds/steps/merchant-initiated';
import { authenticatingEndpoint } from './authenticating-endpoint';

/** `POST /verifications/customers/3ds/merchantInitiated` (docs/threeds.md "Series and 3RI"). */
export const merchantInitiatedEndpoint = authenticatingEndpoint(() => MERCHANT_INITIATED, merchantInitiated);
