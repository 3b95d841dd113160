import { API_ROUTES } from './app/api-routes';
import { createWorker } from './app/create-worker';
import { embeddedServices } from './app/embedded-services';
import { testAppIssuer } from './app/test-app-issuer';
import { DEMO_ROUTES, demoServed } from './demo/demo-routes';
import { serviceRoutes } from './routes/service-pages';
import { TEST_ISSUER_ROUTES } from './routes/threeds/app-issuer-routes';

/**
 * The Worker for `test` and local development (`npm start`): the landing page and health route,
 * the service's API and pages, plus the demo checkout at /demo. The live deployment runs
 * src/live.ts, which has no demo at all.
 */
export default createWorker([...serviceRoutes({ demoServed }), ...API_ROUTES, ...TEST_ISSUER_ROUTES, ...DEMO_ROUTES], {
  ...embeddedServices({ live: false }),
  appIssuer: testAppIssuer(),
}) satisfies ExportedHandler<Env>;

/** The Durable Objects that own the state and project it to KV (docs/storage.md). */
export { ThreeDsTransaction } from './threeds/transaction/transaction-object';
export { TokenGroup } from './tokens/token-group';
/** A merchant's events and their delivery (docs/events.md). */
export { EventLog } from './events/event-log';
