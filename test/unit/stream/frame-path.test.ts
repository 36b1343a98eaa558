// The frames one batch gives each connection, joined once per distinct sequence (src/stream/frame-path.ts).
import { describe, expect, it } from 'vitest';
import { FramePath, JOIN_MAX_BYTES } from '../../../src/stream/frame-path.js';
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

  it('joins a long path only when another connection holds it too; alone, it is written frame by frame', () => {
    const big = (n: number): Buffer => frame(`{"seq":${n},"pad":"${'x'.repeat(JOIN_MAX_BYTES / 2)}"}`);
    const [a, b, c] = [big(1), big(2), big(3)];
    const root = new FramePath();
    // Two connections on a, b, c; one more on a, c.
    const shared1 = root.then(a).then(b).then(c);
    const shared2 = root.then(a).then(b).then(c);
    const alone = root.then(a).then(c);
    expect(alone.bytes).toBeGreaterThan(JOIN_MAX_BYTES);
    expect(alone.take()).toBeNull();
    expect(alone.frames()).toEqual([a, c]);
    const first = shared1.take();
    expect(first).toEqual(Buffer.concat([a, b, c]));
    // The second holder writes the very Buffer the first did.
    expect(shared2.take()).toBe(first);
  });

  it('writes a short path of its own as one Buffer', () => {
    const [a, b] = [frame('{"seq":1}'), frame('{"seq":2}')];
    const path = new FramePath().then(a).then(b);
    expect(path.take()).toEqual(Buffer.concat([a, b]));
  });

  it('writes a single frame as its own bytes, not a copy', () => {
    const a = frame('{"seq":1}');
    expect(new FramePath().then(a).buffer()).toBe(a);
    const big = frame(`{"pad":"${'x'.repeat(2 * JOIN_MAX_BYTES)}"}`);
    expect(new FramePath().then(big).take()).toBe(big);
    expect(new FramePath().bytes).toBe(0);
  });
});
