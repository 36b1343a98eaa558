// The OpenAPI document tells a generated client what production asks for, whatever the stack it
// was generated from: signed party routes, public routes marked public, the 413/415 answers, an
// optional `depth`, and cursors a validating proxy can check.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type TestGateway } from '../../support/gateway.js';

const SIGNED = [{ xUser: [], xSessionId: [], xSessionSig: [] }];

describe('OpenAPI security and error declarations', () => {
  let gw: TestGateway;
  let doc: any;
  beforeAll(async () => {
    gw = await startGateway({ AUTH_DISABLED: 'true', DATABASE_URL: undefined });
    doc = (await gw.app.inject('/docs/json')).json();
  });
  afterAll(async () => {
    await gw.close();
  });

  it('keeps party routes signed with AUTH_DISABLED=true, and says security: [] on public system routes', () => {
    expect(doc.paths['/v1/users/{party}/fills'].get.security).toEqual(SIGNED);
    expect(doc.paths['/v1/users/{party}/faucet'].post.security).toEqual(SIGNED);
    for (const path of ['/healthz', '/readyz', '/readyz/replica', '/metrics']) expect(doc.paths[path].get.security, path).toEqual([]);
    expect(doc.paths['/v1/stream'].get.security).toEqual([]);
  });

  it('declares 413 payload_too_large and 415 unsupported_media_type on the body routes', () => {
    const bodyRoutes = [['/v1/orders', 'post'], ['/v1/tpsl', 'post'], ['/v1/session-auth', 'post'], ['/v1/user/me', 'get'], ['/v1/orders/{orderId}', 'delete'], ['/v1/users/{party}/faucet', 'post']] as const;
    for (const [path, method] of bodyRoutes) {
      const responses = doc.paths[path][method].responses;
      expect(responses['413'].description, path).toContain('payload_too_large');
      expect(responses['415'].description, path).toContain('unsupported_media_type');
      expect(responses['413'].content['application/json'].schema).toEqual({ $ref: '#/components/schemas/Error' });
    }
  });

  it('declares depth optional with its default, and nextCursor as a nullable integer', () => {
    const depth = doc.paths['/v1/orderbook'].get.parameters.find((p: { name: string }) => p.name === 'depth');
    expect(depth.required).toBe(false);
    expect(depth.schema).toMatchObject({ type: 'integer', default: 20 });
    const cursor = doc.paths['/v1/fills'].get.responses['200'].content['application/json'].schema.properties.nextCursor;
    expect(cursor).toMatchObject({ type: 'integer', nullable: true });
    expect(cursor.enum).toBeUndefined();
  });

  it('documents the plain GET of /v1/stream: 426 when accepted, the refusals otherwise', () => {
    const op = doc.paths['/v1/stream'].get;
    expect(Object.keys(op.responses).sort()).toEqual(['400', '401', '403', '426', '429', '503']);
    expect(op.parameters.map((p: { name: string }) => p.name)).toEqual(
      expect.arrayContaining(['kinds', 'markets', 'intervals', 'party', 'since', 'control', 'user', 'sessionId', 'sig', 'epoch', 'heartbeat', 'snapshot']),
    );
  });
});
