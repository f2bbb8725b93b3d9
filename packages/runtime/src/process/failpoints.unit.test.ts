import { afterEach, describe, expect, it } from 'vitest';
import { FailpointError, failpoint, failpointsActive, setFailpoints } from './failpoints.ts';

afterEach(() => setFailpoints(undefined));

describe('failpoints (deterministic crash points)', () => {
  it('are off unless configured', async () => {
    setFailpoints('');
    expect(failpointsActive()).toEqual([]);
    await expect(failpoint('projector.after-commit-before-ack')).resolves.toBeUndefined();
  });

  it('error throws at the named point only', async () => {
    setFailpoints('relay.after-publish-before-mark=error');
    await expect(failpoint('projector.before-apply')).resolves.toBeUndefined();
    await expect(failpoint('relay.after-publish-before-mark')).rejects.toBeInstanceOf(FailpointError);
  });

  it('@N fires on the Nth time only', async () => {
    setFailpoints('gateway.before-append=error@2');
    await expect(failpoint('gateway.before-append')).resolves.toBeUndefined();
    await expect(failpoint('gateway.before-append')).rejects.toThrow('failpoint gateway.before-append');
    await expect(failpoint('gateway.before-append')).resolves.toBeUndefined();
  });

  it('sleep(ms) delays; several points are separated by ; or ,', async () => {
    setFailpoints('a.b=sleep(30);c.d=exit,e.f=error');
    expect(failpointsActive()).toEqual(['a.b', 'c.d', 'e.f']);
    const t0 = performance.now();
    await failpoint('a.b');
    expect(performance.now() - t0).toBeGreaterThanOrEqual(25);
  });

  it('a spec it cannot parse is refused at start', () => {
    expect(() => setFailpoints('x=explode')).toThrow(/unknown action/);
    expect(() => setFailpoints('no-action')).toThrow(/cannot parse/);
  });
});
