// WebSocket fan-out at /v1/stream (spec §6).
import type { RoutePlugin } from '../app.js';

export const streamRoutes: RoutePlugin = async () => {};
