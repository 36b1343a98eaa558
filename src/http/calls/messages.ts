// Reads a socket message into the call it names (docs/stream.md "Talking to the socket"), from the
// calls' declarations alone: the op names the call; the fields a message may carry are its schema's
// properties; the call's reader (`fromMessage`) says what is wrong in words of its own, then the
// whole message is checked against the schema the AsyncAPI document shows. The schemas are compiled
// once: interpreted (Value.Check), one subscribe with its lists at their bound (300 values, each
// tried against a union of literals) cost milliseconds, and one address's connections at the
// message rate kept the event loop busy for seconds.
import { Compile } from 'typebox/compile';
import type { TSchema } from 'typebox';
import { MalformedMessageError, messageIdOf, type MessageId } from '../../stream/client-messages.js';
import type { ClientCall } from './declaration.js';

interface SocketOp {
  readonly call: ClientCall;
  readonly check: ReturnType<typeof Compile>;
  readonly fields: readonly string[];
}

/** A message read: the call it names, its id, and the call's input. */
export interface ReadMessage {
  readonly call: ClientCall;
  readonly op: string;
  readonly id: MessageId;
  readonly input: unknown;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export class CallMessages {
  private readonly ops = new Map<string, SocketOp>();
  private readonly names: string;

  constructor(calls: readonly ClientCall[]) {
    for (const call of calls) {
      if (call.op === null) continue;
      if (!call.message || !call.fromMessage) throw new Error(`call ${call.op}: a socket op needs its message schema and reader`);
      if (this.ops.has(call.op)) throw new Error(`call ${call.op} is declared twice`);
      const schema = call.message as TSchema & { properties?: Record<string, unknown> };
      this.ops.set(call.op, { call, check: Compile(schema), fields: Object.keys(schema.properties ?? {}) });
    }
    this.names = [...this.ops.keys()].join(', ');
  }

  /** The ops, in the order the calls are listed. */
  get opNames(): string[] {
    return [...this.ops.keys()];
  }

  /** The op of a message when it names a known one (for the error answer of a message otherwise wrong). */
  opOf(value: unknown): string | null {
    if (!isObject(value)) return null;
    return typeof value.op === 'string' && this.ops.has(value.op) ? value.op : null;
  }

  /** The id and op of a text that could not be read, as far as they can be. */
  idAndOp(text: string): { id: MessageId | null; op: string | null } {
    try {
      const value: unknown = JSON.parse(text);
      return { id: messageIdOf(value), op: this.opOf(value) };
    } catch {
      return { id: null, op: null };
    }
  }

  /** Reads one text message; throws MalformedMessageError (or the reader's own domain error). */
  read(text: string): ReadMessage {
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      throw new MalformedMessageError('the message is not JSON');
    }
    if (!isObject(value)) throw new MalformedMessageError('the message must be a JSON object {"op", "id", …}');
    const op = this.opOf(value);
    if (op === null) throw new MalformedMessageError(`"op" must be one of ${this.names}`);
    const id = messageIdOf(value);
    if (id === null) throw new MalformedMessageError('"id" must be a string of 1..64 printable ASCII characters or an integer');
    const { call, check, fields } = this.ops.get(op)!;
    for (const name of Object.keys(value)) {
      if (!fields.includes(name)) throw new MalformedMessageError(`unknown field "${name.slice(0, 64)}" for op ${op} (allowed: ${fields.join(', ')})`);
    }
    const input = call.fromMessage!(value, id);
    call.beforeSchema?.(value);
    if (!check.Check(value)) {
      const first = check.Errors(value)[0];
      throw new MalformedMessageError(`the message does not fit ${op}: ${first ? `${first.instancePath || '/'} ${first.message}` : 'invalid'}`);
    }
    return { call, op, id, input };
  }
}
