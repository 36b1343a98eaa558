// The docs/client.md client error: every non-2xx gateway answer (and a request that never got one) is
// raised as a GatewayError with the status, the path and the `{error, code}` body. Engine business
// rejections (HTTP 200, `ok:false`) are NOT errors: methods return them as values.
export interface ErrorBody {
  error: string;
  code?: string;
  [extra: string]: unknown;
}

export class GatewayError extends Error {
  constructor(
    /** HTTP status; 0 when no answer arrived (network failure). */
    readonly status: number,
    /** Path and query of the request, e.g. `/v1/users/a::…/fills?limit=50`. */
    readonly path: string,
    readonly body: ErrorBody,
  ) {
    super(`${status || 'network error'} ${path}: ${body.error}`);
    this.name = 'GatewayError';
  }

  get code(): string | undefined {
    return this.body.code;
  }
  get isNotFound(): boolean {
    return this.status === 404;
  }
  get isUnauthorized(): boolean {
    return this.status === 401 || this.status === 403;
  }
  get isServer(): boolean {
    return this.status >= 500;
  }
  get isNetwork(): boolean {
    return this.status === 0;
  }
  get isRateLimited(): boolean {
    return this.status === 429;
  }
}

/** Builds the error body from whatever the server sent (HTML from an edge proxy included). */
export function errorBody(status: number, text: string): ErrorBody {
  try {
    const parsed = JSON.parse(text) as unknown;
    if (parsed && typeof parsed === 'object' && typeof (parsed as ErrorBody).error === 'string') return parsed as ErrorBody;
  } catch {
    // not JSON: fall through
  }
  return { error: `HTTP ${status}${text ? `: ${text.slice(0, 200)}` : ''}`, code: 'http_error' };
}
