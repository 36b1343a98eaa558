// The frames one batch gives each connection, joined once per distinct sequence (src/stream/frame-path.ts).
import { describe, expect, it } from 'vitest';
import { FramePath } from '../../../src/stream/frame-path.js';
import { wireFrame } from '../../../src/stream/client.js';

const frame = (text: string): Buffer => wireFrame(Buffer.from(text));

describe('a batch of frame paths', () => {
  it('gives connections that took the same frames in the same order the very same Buffer', () => {
    const root = new FramePath();
    const [a, b, c] = [frame('{"seq":1}'), frame('{"seq":2}'), frame('{"seq":3}')];
    const first = root.then(a).then(b).then(c);
    const second = root.then(a).then(b).then(c);
    expect(second).toBe(first);
    expect(second.buffer()).toBe(first.buffer());
    expect(first.buffer()).toEqual(Buffer.concat([a, b, c]));
    expect(first.bytes).toBe(a.length + b.length + c.length);
  });

  it('keeps each connection its own frames, in its own order', () => {
    const root = new FramePath();
    const [a, b, c] = [frame('{"seq":1}'), frame('{"seq":2}'), frame('{"seq":3}')];
    expect(root.then(a).then(c).buffer()).toEqual(Buffer.concat([a, c]));
    expect(root.then(b).then(a).buffer()).toEqual(Buffer.concat([b, a]));
    expect(root.then(a).buffer()).toEqual(a);
    // The prefix of a longer path is a path of its own, with only its frames.
    expect(root.then(a).then(c).then(b).buffer()).toEqual(Buffer.concat([a, c, b]));
    expect(root.then(a).then(c).buffer()).toEqual(Buffer.concat([a, c]));
  });

  it('writes a single frame as its own bytes, not a copy', () => {
    const a = frame('{"seq":1}');
    expect(new FramePath().then(a).buffer()).toBe(a);
    expect(new FramePath().bytes).toBe(0);
  });
});
