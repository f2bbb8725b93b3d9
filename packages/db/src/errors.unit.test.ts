import { describe, expect, it } from 'vitest';
import { classifyDbError } from './errors.ts';

// A dependency's outage is a 503 at the gateway and a retry (never a park) in the projector
// (docs/operations.md "Faults and outages").
describe('classifyDbError', () => {
  it.each([
    [{ code: 'ECONNREFUSED' }, 'unavailable'],
    [{ code: 'ECONNRESET' }, 'unavailable'],
    [{ code: '57P01', message: 'terminating connection due to administrator command' }, 'unavailable'],
    [{ code: '57P03', message: 'the database system is starting up' }, 'unavailable'],
    [{ code: '08006' }, 'unavailable'],
    [{ code: '53300', message: 'too many connections' }, 'unavailable'],
    [new Error('Connection terminated unexpectedly'), 'unavailable'],
    [new Error('timeout exceeded when trying to connect'), 'unavailable'],
    [Object.assign(new AggregateError([{ code: 'ECONNREFUSED' }, { code: 'ECONNREFUSED' }]), {}), 'unavailable'],
    [{ code: '40001' }, 'transient'],
    [{ code: '40P01' }, 'transient'],
    [{ code: '57014' }, 'transient'],
  ])('%o is %s', (err, kind) => {
    expect(classifyDbError(err)).toBe(kind);
  });

  it.each([
    [{ code: '22008', message: 'date/time field value out of range' }],
    [{ code: '23505' }],
    [{ code: '54000' }],
    [new TypeError('cannot read properties of undefined')],
    [null],
    ['a string'],
  ])('%o is permanent: retrying the same command fails the same way', (err) => {
    expect(classifyDbError(err)).toBe('permanent');
  });
});
