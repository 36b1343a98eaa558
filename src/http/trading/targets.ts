// Engine targets built from validated parameters (docs/trading.md "Request targets"), for the REST
// routes and the socket's order messages alike: the target is what the client signed.
import { ApiError } from '../errors.js';

/** Order ids are opaque engine strings; one that a server could read as a path segment is refused. */
export function orderIdPath(orderId: string): string {
  // eslint-disable-next-line no-control-regex -- control characters are exactly what is refused here
  if (orderId === '.' || orderId === '..' || /[/\\\x00-\x1f\x7f]/.test(orderId)) {
    throw new ApiError('bad_request', 'path parameter "orderId" must not contain "/", "\\" or control characters, nor be "." or ".."');
  }
  return `/v1/orders/${encodeURIComponent(orderId)}`;
}
