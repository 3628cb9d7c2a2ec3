import { ApiException } from '@kubernetes/client-node';
import { describeApiError, statusOf } from '../../src/cluster/apiStatus.js';
import { ApiWriteError } from '../../src/cluster/apiWrites.js';
import { describeFailure } from '../../src/cluster/reflector.js';

describe('statusOf: the one reader of an API failure’s HTTP status', () => {
  it.each([
    [
      'an ApiException of the generated API (code)',
      new ApiException(403, 'Forbidden', { kind: 'Status', code: 403, message: 'no' }, {}),
      403,
    ],
    [
      'the Watch’s error for a refused watch request (statusCode)',
      Object.assign(new Error('Gone'), { statusCode: 410 }),
      410,
    ],
    [
      'the Status object of a watch ERROR event (code)',
      { kind: 'Status', apiVersion: 'v1', status: 'Failure', code: 410, reason: 'Expired' },
      410,
    ],
    [
      'a worker’s requeue failure carrying the status it was given (code)',
      Object.assign(new Error('x'), { code: 404 }),
      404,
    ],
  ])('reads %s', (_what, err, status) => {
    expect(statusOf(err)).toBe(status);
  });

  it.each([
    [
      'a connection error (string code)',
      Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:6443'), { code: 'ECONNREFUSED' }),
    ],
    ['a plain Error', new Error('boom')],
    ['null', null],
    ['undefined', undefined],
    ['a string', 'HTTP 500'],
    ['a status given as a string', { statusCode: '500' }],
  ])('finds no status in %s', (_what, err) => {
    expect(statusOf(err)).toBeUndefined();
  });

  it('the reflector describes failures by the same reader', () => {
    expect(describeFailure(Object.assign(new Error('Gone'), { statusCode: 410 }))).toBe('HTTP 410: Gone');
    expect(describeFailure(new ApiException(403, 'Forbidden', { message: 'nodes is forbidden' }, {}))).toBe(
      'HTTP 403: nodes is forbidden',
    );
    expect(describeFailure(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }))).toBe(
      'connect ECONNREFUSED',
    );
  });
});

describe('describeApiError: one line for the log', () => {
  it('keeps the Status message of an undici write and of a client-node ApiException, else the status alone or the message', () => {
    expect(
      describeApiError(
        new ApiWriteError(
          'POST /api/v1/namespaces/q/pods/p/binding: HTTP 403: pods "p" is forbidden: unable to create new content in namespace q because it is being terminated',
          403,
        ),
      ),
    ).toBe(
      'HTTP 403: pods "p" is forbidden: unable to create new content in namespace q because it is being terminated',
    );
    expect(
      describeApiError({
        code: 409,
        body: JSON.stringify({ kind: 'Status', message: 'pod p is already assigned to node n1' }),
      }),
    ).toBe('HTTP 409: pod p is already assigned to node n1');
    expect(describeApiError({ code: 500, body: 'not json' })).toBe('HTTP 500');
    expect(
      describeApiError(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:6443'), { code: 'ECONNREFUSED' })),
    ).toBe('connect ECONNREFUSED 127.0.0.1:6443');
  });
});
