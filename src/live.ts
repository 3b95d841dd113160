import { API_ROUTES } from './app/api-routes';
import { createWorker } from './app/create-worker';
import { embeddedServices } from './app/embedded-services';
import { serviceRoutes } from './routes/service-pages';

/**
 * The Worker of the live deployment (`wrangler deploy --env live`): the landing page and health
 * route, the service's API and pages only. The demo checkout is not in this bundle (`npm run
 * check:bundle` shows both).
 */
export default createWorker(
  [...serviceRoutes(), ...API_ROUTES],
  embeddedServices({ live: true }),
) satisfies ExportedHandler<Env>;

/** The Durable Objects that decide what KV cannot (docs/storage.md). */
export { ThreeDsGuard } from './storage/guards/threeds-guard';
export { TokenGuard } from './storage/guards/token-guard';
export { NamespaceGuard } from './storage/guards/namespace-guard';
