import type { Message } from 'kafkajs';
import { describe, expect, it } from 'vitest';
import { sendParts } from './relay.ts';

const MiB = 1024 * 1024;
const message = (key: string, bytes: number): Message => ({ key, value: Buffer.alloc(bytes) });
const keys = (parts: Array<Array<{ topic: string; messages: Message[] }>>) => parts.map((part) => part.map((p) => `${p.topic}:${p.messages.map((m) => m.key).join(',')}`));

describe('the relay\'s sends', () => {
  it('keep a small batch in one send', () => {
    const parts = [...sendParts(new Map([['a', [message('1', 10), message('2', 10)]], ['b', [message('3', 10)]]]))];
    expect(keys(parts)).toEqual([['a:1,2', 'b:3']]);
  });

  it('cut a batch above 4 MiB into consecutive sends, in order, never leaving a topic with no message', () => {
    const parts = [...sendParts(new Map([['a', [message('1', 3 * MiB), message('2', 3 * MiB)]], ['b', [message('3', 3 * MiB), message('4', MiB / 2)]]]))];
    expect(keys(parts)).toEqual([['a:1'], ['a:2'], ['b:3,4']]);
  });

  it('send a single message above the limit alone', () => {
    const parts = [...sendParts(new Map([['a', [message('1', 10), message('2', 5 * MiB), message('3', 10)]]]))];
    expect(keys(parts)).toEqual([['a:1'], ['a:2'], ['a:3']]);
  });
});
