import { Hearing } from './hearing.js';

/** A Hearing on a clock the test moves; `interruptions` collects what it reported. */
function hearing() {
  let now = 1000;
  const interruptions: string[] = [];
  const h = new Hearing(
    1000,
    () => now,
    (reason) => interruptions.push(reason),
  );
  const advance = (ms: number) => {
    // The event loop turns every 100 ms meanwhile (no stall).
    for (let left = ms; left > 0; left -= 100) {
      now += Math.min(100, left);
      h.tick();
    }
  };
  return {
    h,
    interruptions,
    advance,
    jump: (ms: number) => {
      now += ms;
    },
  };
}

describe('Hearing', () => {
  it('hears nothing until NATS and Redis are both up, then counts from the later one', () => {
    const { h, advance } = hearing();
    advance(5000);
    expect(h.state().heardForMs).toBe(0);
    h.sourceUp('redis', 'Redis connected');
    advance(3000);
    expect(h.state().heardForMs).toBe(0);
    h.sourceUp('nats', 'subscribed');
    advance(2500);
    expect(h.state()).toEqual({ heardForMs: 2500, epoch: 0, reason: 'replica started' });
  });

  it('a lost source ends the hearing; it restarts from zero when the source is back', () => {
    const { h, advance, interruptions } = hearing();
    h.sourceUp('redis', 'Redis connected');
    h.sourceUp('nats', 'subscribed');
    advance(10000);
    h.sourceDown('nats', 'NATS disconnect');
    expect(h.state()).toEqual({ heardForMs: 0, epoch: 1, reason: 'NATS disconnect' });
    // Further losses while nothing is heard are the same interruption.
    h.sourceDown('nats', 'NATS reconnecting');
    h.sourceDown('redis', 'Redis connection lost');
    h.interrupt('heartbeat not recorded');
    advance(60000);
    expect(h.state()).toEqual({ heardForMs: 0, epoch: 1, reason: 'NATS disconnect' });
    h.sourceUp('nats', 'NATS reconnected');
    expect(h.state().heardForMs).toBe(0);
    h.sourceUp('redis', 'Redis reconnected');
    advance(700);
    expect(h.state()).toEqual({ heardForMs: 700, epoch: 1, reason: 'NATS disconnect' });
    expect(interruptions).toEqual(['NATS disconnect']);
  });

  it('a failure while hearing restarts the clock and changes the epoch', () => {
    const { h, advance, interruptions } = hearing();
    h.sourceUp('redis', 'Redis connected');
    h.sourceUp('nats', 'subscribed');
    advance(5000);
    h.interrupt('heartbeat not recorded: READONLY');
    expect(h.state()).toEqual({ heardForMs: 0, epoch: 1, reason: 'heartbeat not recorded: READONLY' });
    advance(300);
    expect(h.state().heardForMs).toBe(300);
    // A source reported up again without having been seen down was lost in between.
    h.sourceUp('redis', 'Redis reconnected');
    expect(h.state()).toEqual({ heardForMs: 0, epoch: 2, reason: 'Redis reconnected' });
    expect(interruptions).toEqual(['heartbeat not recorded: READONLY', 'Redis reconnected']);
  });

  it('a stalled event loop is an interruption, noticed by the timer or by the next read of the state', () => {
    const { h, advance, jump } = hearing();
    h.sourceUp('redis', 'Redis connected');
    h.sourceUp('nats', 'subscribed');
    advance(5000);
    jump(1500);
    h.tick();
    expect(h.state()).toEqual({ heardForMs: 0, epoch: 1, reason: 'event loop stalled for 1500 ms' });
    advance(5000);
    jump(60000);
    // The sweep may run before the timer does: the read itself notices.
    expect(h.state()).toEqual({ heardForMs: 0, epoch: 2, reason: 'event loop stalled for 60000 ms' });
    jump(900);
    expect(h.state()).toEqual({ heardForMs: 900, epoch: 2, reason: 'event loop stalled for 60000 ms' });
  });

  it('hears nothing once closed', () => {
    const { h, advance, interruptions } = hearing();
    h.sourceUp('redis', 'Redis connected');
    h.sourceUp('nats', 'subscribed');
    advance(5000);
    h.close('replica stopping');
    advance(5000);
    expect(h.state()).toEqual({ heardForMs: 0, epoch: 1, reason: 'replica stopping' });
    expect(interruptions).toEqual([]);
  });
});
