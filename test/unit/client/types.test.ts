// Type tests of the client (issue: types that catch mistakes). `npm run typecheck` compiles this
// file: every `@ts-expect-error` below must be an error, or the typecheck fails; expectTypeOf pins
// the inferred types. The runtime parts (decimal inputs as numbers) run as ordinary tests.
import { describe, expect, expectTypeOf, it } from 'vitest';
import {
  DecimalInputError,
  GatewayClient,
  market,
  type Account,
  type Answer,
  type EngineEventOf,
  type Frame,
  type FrameKind,
  type Interval,
  type OrderAccepted,
  type OrderRequest,
  type Orderbook,
  type Rejection,
  type StreamOptions,
  type TriggerWouldFire,
  type TypedEngineEvent,
  type UserMe,
} from '../../../packages/client/src/index.js';

const client = new GatewayClient({ baseUrl: 'http://127.0.0.1:9', retry: { retries: 0 } });

describe('client types', () => {
  it('an order request is typed by its order type: a limit needs a price, a market order takes no tif at all', () => {
    const limit: OrderRequest = { market: 'BTC-PERP', side: 'buy', type: 'limit', size: '0.01', price: '60000' };
    const marketOrder: OrderRequest = { market: 'BTC-PERP', side: 'sell', type: 'market', size: '0.01' };
    // @ts-expect-error a limit order without a price
    const noPrice: OrderRequest = { market: 'BTC-PERP', side: 'buy', type: 'limit', size: '0.01' };
    // @ts-expect-error a market order cannot rest (gtc)
    const restingMarket: OrderRequest = { market: 'BTC-PERP', side: 'buy', type: 'market', size: '0.01', tif: 'gtc' };
    // @ts-expect-error a market order is always ioc: even tif 'ioc' is refused (docs/client.md says so)
    const iocMarket: OrderRequest = { market: 'BTC-PERP', side: 'buy', type: 'market', size: '0.01', tif: 'ioc' };
    expect([limit, marketOrder, noPrice, restingMarket, iocMarket]).toHaveLength(5);
    expectTypeOf(client.placeOrder).returns.resolves.toEqualTypeOf<Answer<OrderAccepted> | TriggerWouldFire>();
  });

  it('known markets are checked as literals; a run-time string or market() is the escape hatch', () => {
    const place = (): void => {
      void client.placeOrder({ market: 'ETH-PERP', side: 'buy', type: 'limit', size: '1', price: '3000' });
      // @ts-expect-error a misspelt market literal
      void client.placeOrder({ market: 'btc-perp', side: 'buy', type: 'limit', size: '1', price: '3000' });
      const fromServer: string = ['NEW-PERP'][0]!;
      void client.placeOrder({ market: fromServer, side: 'buy', type: 'limit', size: '1', price: '3000' });
      void client.placeOrder({ market: market('NEW-PERP'), side: 'buy', type: 'limit', size: '1', price: '3000' });
    };
    expectTypeOf(place).toBeFunction();
  });

  it('stream kinds and intervals are literal unions', () => {
    expectTypeOf<NonNullable<StreamOptions['kinds']>[number]>().toEqualTypeOf<FrameKind>();
    expectTypeOf<NonNullable<StreamOptions['intervals']>[number]>().toEqualTypeOf<Interval>();
    expectTypeOf<'trade'>().toExtend<FrameKind>();
    expectTypeOf<'account.update'>().toExtend<FrameKind>();
    expectTypeOf<'trades'>().not.toExtend<FrameKind>();
    expectTypeOf<'2m'>().not.toExtend<Interval>();
    const ok: StreamOptions['kinds'] = ['trade', 'engine.order_filled'];
    // @ts-expect-error 'trades' is not a kind
    const bad: StreamOptions['kinds'] = ['trades'];
    expect([ok, bad]).toHaveLength(2);
  });

  it('every passthrough kind has a typed payload; frames narrow on kind', () => {
    expectTypeOf<EngineEventOf<'engine.order_filled'>['payload']['legs'][number]['newBalance']>().toEqualTypeOf<string>();
    expectTypeOf<EngineEventOf<'inbound.deposit'>['payload']['source']>().toEqualTypeOf<'chain' | 'faucet'>();
    expectTypeOf<EngineEventOf<'engine.order_cancelled'>['payload']['reason']>().toEqualTypeOf<'user' | 'ioc' | 'reduce_only' | 'margin'>();
    expectTypeOf<EngineEventOf<'engine.trigger_fired'>['payload']['firedLimit']>().toEqualTypeOf<string | null>();
    expectTypeOf<Extract<TypedEngineEvent, { kind: 'outbound.batch_committed' }>['payload']['lastSeq']>().toEqualTypeOf<number>();
    expectTypeOf<EngineEventOf<'engine.order_placed'>['payload']['order']['seq']>().toEqualTypeOf<number>();
    expectTypeOf<EngineEventOf<'engine.trigger_set'>['payload']['trigger']['kind']>().toEqualTypeOf<'tp' | 'sl'>();
    expectTypeOf<UserMe['openOrders'][number]['filledSize']>().toEqualTypeOf<string>();
    const legs = (f: Frame): string[] => (f.kind === 'engine.order_filled' ? f.payload.legs.map((l) => l.party) : []);
    const account = (f: Frame): string | null => (f.kind === 'account.update' ? f.payload.freeCollateral : null);
    expectTypeOf(legs).returns.toEqualTypeOf<string[]>();
    expectTypeOf(account).returns.toEqualTypeOf<string | null>();
  });

  it('statuses: a placed order is never "rejected" (that is a Rejection value)', () => {
    expectTypeOf<OrderAccepted['status']>().toEqualTypeOf<'open' | 'partially_filled' | 'filled' | 'cancelled'>();
    expectTypeOf<'rejected'>().not.toExtend<OrderAccepted['status']>();
  });

  it('one way of reporting an engine refusal: getOrderbook answers a value like placeOrder', () => {
    expectTypeOf(client.getOrderbook).returns.resolves.toEqualTypeOf<Answer<Orderbook>>();
    expectTypeOf<Rejection>().toExtend<Awaited<ReturnType<GatewayClient['getOrderbook']>>>();
    expectTypeOf(client.getUserMe).returns.resolves.toEqualTypeOf<Answer<UserMe>>();
    expectTypeOf(client.getAccount).returns.resolves.toEqualTypeOf<Account>();
  });

  it('decimals are strings: a number does not compile, and from JavaScript it is refused before sending', async () => {
    // @ts-expect-error a number size
    const numeric: OrderRequest = { market: 'BTC-PERP', side: 'buy', type: 'limit', size: 0.001, price: '60000' };
    await expect(client.placeOrder(numeric)).rejects.toThrow(DecimalInputError);
    await expect(client.placeOrder(numeric)).rejects.toThrow('size must be a decimal string such as "0.001", not the number 0.001');
    const numericTrigger = { market: 'BTC-PERP', tp: { triggerPrice: 61000 } } as unknown as Parameters<GatewayClient['setTpsl']>[0];
    await expect(client.setTpsl(numericTrigger)).rejects.toThrow('tp.triggerPrice must be a decimal string');
  });
});
