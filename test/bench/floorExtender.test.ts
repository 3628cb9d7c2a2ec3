import { describe, expect, it } from '@jest/globals';
import { floorFilterReply } from '../../bench/floorExtender.js';

describe('the floor extender (bench:cluster --floor)', () => {
  const body = JSON.stringify({ Pod: { metadata: { name: 'p', uid: 'u' } }, Nodes: null, NodeNames: ['a', 'b', 'c'] });

  it('answers the names in turn, one per call, in the one-call Filter shape', () => {
    expect([0, 1, 2, 3].map((call) => JSON.parse(floorFilterReply(body, call)).NodeNames)).toEqual([['a'], ['b'], ['c'], ['a']]);
    expect(JSON.parse(floorFilterReply(body, 0))).toEqual({ NodeNames: ['a'], FailedNodes: {}, FailedAndUnresolvableNodes: {}, Error: '' });
  });

  it('answers no names for a request without any, and an Error for a body that is not JSON', () => {
    expect(JSON.parse(floorFilterReply(JSON.stringify({ Pod: {}, NodeNames: [] }), 5)).NodeNames).toEqual([]);
    expect(JSON.parse(floorFilterReply('{"Pod":', 0)).Error).toMatch(/^floor extender: body is not JSON/);
  });
});
