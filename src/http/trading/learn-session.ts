// The engine's answer to a proxied `/v1/session-auth`, handed to the auth layer's session learning
// (src/auth/session-learning.ts): only a 200 counts.
import type { SessionLearning } from '../../auth/session-learning.js';
import { parseJson, type EngineResponse } from '../../engine/client.js';

export function learnSession(learning: SessionLearning, requestBody: unknown, res: EngineResponse): boolean {
  return res.status === 200 && learning.authorized(requestBody, parseJson(res.body));
}
