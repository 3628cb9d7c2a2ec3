import { jest } from '@jest/globals';
import { TurnBatch } from '../../src/cluster/turnBatch.js';

describe('TurnBatch (the messages between the main thread and the API worker)', () => {
  it('batches Events per turn of the event loop: none sent during the turn, one message after it, in order', async () => {
    const sent: string[][] = [];
    const batch = new TurnBatch<string>((items) => sent.push([...items]));
    batch.push('a');
    batch.push('b');
    expect(sent).toEqual([]); // the verb's reply goes out first
    await new Promise((r) => setImmediate(r));
    expect(sent).toEqual([['a', 'b']]);
    batch.push('c');
    batch.flush(); // at stop: at once
    await new Promise((r) => setImmediate(r));
    expect(sent).toEqual([['a', 'b'], ['c']]);
  });

  it('with a delay, collects what comes within it into one message (the Events of a burst), flushed at once on demand', async () => {
    jest.useFakeTimers();
    try {
      const sent: string[][] = [];
      const batch = new TurnBatch<string>((items) => sent.push([...items]), 50);
      batch.push('a');
      jest.advanceTimersByTime(30);
      batch.push('b'); // within the 50 ms of the first: same message
      expect(sent).toEqual([]);
      jest.advanceTimersByTime(20);
      expect(sent).toEqual([['a', 'b']]);
      batch.push('c');
      jest.advanceTimersByTime(49);
      expect(sent).toEqual([['a', 'b']]);
      batch.flush(); // at stop: at once, and the timer finds nothing
      jest.advanceTimersByTime(100);
      expect(sent).toEqual([['a', 'b'], ['c']]);
    } finally {
      jest.useRealTimers();
    }
  });
});
