import { describe, expect, it } from '@jest/globals';
import { tcpPort } from '../../bench/cliOptions.js';
import { floorFilterReply } from '../../bench/floorExtender.js';

describe('the floor extender (bench:cluster --floor)', () => {
  const body = JSON.stringify({ Pod: { metadata: { name: 'p', uid: 'u' } }, Nodes: null, NodeNames: ['a', 'b', 'c'] });

  it('answers the names in turn, one per call, in the one-call Filter shape', () => {
    expect([0, 1, 2, 3].map((call) => JSON.parse(floorFilterReply(body, call)).NodeNames)).toEqual([
      ['a'],
      ['b'],
      ['c'],
      ['a'],
    ]);
    expect(JSON.parse(floorFilterReply(body, 0))).toEqual({
      NodeNames: ['a'],
      FailedNodes: {},
      FailedAndUnresolvableNodes: {},
      Error: '',
    });
  });

  it('answers no names for an empty list', () => {
    expect(JSON.parse(floorFilterReply(JSON.stringify({ Pod: {}, NodeNames: [] }), 5))).toEqual({
      NodeNames: [],
      FailedNodes: {},
      FailedAndUnresolvableNodes: {},
      Error: '',
    });
  });

  it.each([
    ['{"Pod":', /^floor extender: body is not JSON/],
    ['null', /body is not an ExtenderArgs object/],
    ['[1,2]', /body is not an ExtenderArgs object/],
    ['{"Pod":{}}', /NodeNames is not a list of node names/],
    ['{"NodeNames":"a"}', /NodeNames is not a list of node names/],
    ['{"NodeNames":[1,null]}', /NodeNames holds something other than a node name/],
  ])("answers the protocol's Error for %s, naming what is wrong, and no node", (text, error) => {
    const reply = JSON.parse(floorFilterReply(text, 0));
    expect(reply.Error).toMatch(error);
    expect(reply.NodeNames).toBeNull();
  });

  it('takes a port 1–65535 in decimal digits only', () => {
    expect(tcpPort('8888')).toBe(8888);
    for (const bad of ['0', '65536', '99999', '1e3', '0x4000', '-1', '', 'abc'])
      expect(() => tcpPort(bad)).toThrow('expected a port number 1–65535');
  });
});
