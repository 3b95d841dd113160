import { authenticateSchema } from '../../schemas/threeds-requests-v3';
import { authenticate } from '../../threeds/steps/authenticate';
import { authenticatingEndpoint } from './authenticating-endpoint';

/** `POST /verifications/customers/3ds/authenticate` (docs/threeds.md "authenticate"). */
export const authenticateEndpoint = authenticatingEndpoint(authenticateSchema, authenticate);
