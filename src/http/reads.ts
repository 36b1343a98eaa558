// REST reads over the indexer database (spec §4): one plugin per route family.
import type { RoutePlugin } from '../app.js';

export const readRoutes: RoutePlugin = async () => {};
