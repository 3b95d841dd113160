import { API_ROUTES } from './app/api-routes';
import { createWorker } from './app/create-worker';
import { embeddedServices } from './app/embedded-services';
import { LIVE_DEMO_ROUTES } from './demo/demo-routes';
import { serviceRoutes } from './routes/service-pages';

/**
 * Whether this build carries the demo checkout: a build-time constant, `false` in wrangler.toml's
 * `[env.live.define]` (what `wrangler deploy --env live` ships), `true` only when a local live
 * checkout asks for it (`npm run start:live`: `wrangler dev --env live --define LIVE_DEMO:true`).
 * esbuild folds it, so the deployed bundle has no demo at all (`npm run check:bundle` checks).
 */
declare const LIVE_DEMO: boolean;

/**
 * The Worker of the live deployment (`wrangler deploy --env live`): the landing page and health
 * route, the service's API and pages only. `npm run start:live` serves this same entry, built with
 * the demo checkout at /demo.
 */
export default createWorker(
  [
    // Unset (a build without the define, such as the test pool's import of this module): no demo.
    ...serviceRoutes({ demoServed: () => typeof LIVE_DEMO !== 'undefined' && LIVE_DEMO }),
    ...(typeof LIVE_DEMO !== 'undefined' && LIVE_DEMO ? [...API_ROUTES, ...LIVE_DEMO_ROUTES] : API_ROUTES),
  ],
  embeddedServices({ live: true }),
) satisfies ExportedHandler<Env>;

/** The Durable Objects that own the state and project it to KV (docs/storage.md). */
export { ThreeDsTransaction } from './threeds/transaction/transaction-object';
export { TokenGroup } from './tokens/token-group';
/** A merchant's events and their delivery (docs/events.md). */
export { EventLog } from './events/event-log';
