import type { JsMsg } from '@nats-io/jetstream';
import type { EventInfo, ResolvedWebhook } from '@switchboard/contracts';
import { Metrics } from '@switchboard/service-kit';
import { loadWebhookWorkerConfig } from '../config.js';
import type { DeliveryJobData, DeliveryQueue } from '../delivery/delivery-queue.js';
import { UncertainIntake, type DeliveryRepository, type IntakeCommit } from '../log/delivery.repository.js';
import type { WebhookResolver } from '../matching/webhook-resolver.js';
import { WebhookMetrics } from '../metrics/webhook-metrics.js';
import type { PlannedJob } from './delivery-planner.js';
import { EventIntake, type PreparedGroup } from './event-intake.js';

const config = loadWebhookWorkerConfig({
  NATS_URL: 'nats://127.0.0.1:4222',
  REDIS_URL: 'redis://127.0.0.1:6379',
  DATABASE_URL: 'postgres://u@127.0.0.1/db',
  WEBHOOK_EVENT_ACK_WAIT_MS: '1000',
});
const hook: ResolvedWebhook = {
  id: 'w',
  source: 'application',
  url: 'https://x.test/w',
  events: null,
  batch: false,
  reliable: true,
  disabled: false,
};
const event = (id: string): EventInfo =>
  ({
    id,
    timestamp: 1,
    origin: 'client',
    type: 'client.updated',
    forced: false,
    channel: null,
    client: null,
    connection: null,
    message: null,
  }) as EventInfo;
const refused = () => Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
const cutOff = () => Object.assign(new Error('Connection terminated unexpectedly'), {});

/** A stream message that counts what is done with it. */
function message(seq: number) {
  const done = { ack: 0, nak: 0, working: 0 };
  const msg = { seq, ack: () => done.ack++, nak: () => done.nak++, working: () => done.working++ } as unknown as JsMsg;
  return { msg, done };
}

/**
 * The repository's intake transaction scripted one call at a time: each step is what the call
 * does, given the jobs planned for the events it finds fresh (all of them: the fake processed
 * table is empty until a commit succeeds).
 */
type Step = (jobs: PlannedJob[]) => IntakeCommit;

function setUp(commits: Step[], statuses: Array<'committed' | 'aborted' | 'in progress' | Error> = []) {
  const calls = { commits: 0, statuses: 0 };
  const repository = {
    commitIntake: async (ids: string[], plan: (fresh: ReadonlySet<string>) => PlannedJob[]) => {
      calls.commits++;
      const step = commits.shift();
      if (!step) throw new Error('unexpected commit');
      return step(plan(new Set(ids)));
    },
    intakeStatus: async () => {
      calls.statuses++;
      const s = statuses.shift();
      if (s === undefined) throw new Error('unexpected status lookup');
      if (s instanceof Error) throw s;
      return s;
    },
  } as unknown as DeliveryRepository;
  const queued: DeliveryJobData[] = [];
  const queue = {
    addAllPersistently: async (jobs: DeliveryJobData[]) => {
      queued.push(...jobs);
      return true;
    },
  } as unknown as DeliveryQueue;
  const intake = new EventIntake(
    config,
    {} as WebhookResolver,
    repository,
    queue,
    new WebhookMetrics(new Metrics('test')),
  );
  const messages = [message(1), message(2)];
  const group: PreparedGroup = {
    batching: false,
    ready: messages.map(({ msg }, i) => ({
      msg,
      matched: {
        event: event(`e${i + 1}`),
        seq: msg.seq,
        applicationId: 'app',
        organizationId: 'org',
        channelId: 'ch',
        webhooks: [hook],
      },
    })),
  };
  return { intake, group, messages, queued, calls };
}

const fresh = (jobs: PlannedJob[]): IntakeCommit => ({
  fresh: new Set(jobs.flatMap((j) => j.deliveries.flatMap((d) => d.events.map((e) => e.id)))),
  jobs,
});
const eventsOf = (jobs: DeliveryJobData[]) =>
  jobs.flatMap((j) => j.deliveries.flatMap((d) => d.events.map((e) => e.id)));

describe('EventIntake.commit while PostgreSQL is down', () => {
  it('commits the group again with its events in hand (told working, not handed back), then queues and acknowledges', async () => {
    const t = setUp([
      () => {
        throw refused();
      },
      fresh,
    ]);
    const result = await t.intake.commit(t.group, () => false);
    expect(result).toEqual({ acked: 2, deliveries: 2 });
    expect(t.calls.commits).toBe(2);
    expect(eventsOf(t.queued)).toEqual(['e1', 'e2']);
    for (const { done } of t.messages) expect(done).toEqual({ ack: 1, nak: 0, working: 1 });
  });

  it('a commit cut off that PostgreSQL did make: its jobs are queued, not committed again (which would find the events processed and queue nothing)', async () => {
    const t = setUp(
      [
        (jobs) => {
          throw new UncertainIntake('1234', fresh(jobs), cutOff());
        },
      ],
      [refused(), 'in progress', 'committed'],
    );
    const result = await t.intake.commit(t.group, () => false);
    expect(t.calls).toEqual({ commits: 1, statuses: 3 });
    expect(result).toEqual({ acked: 2, deliveries: 2 });
    expect(eventsOf(t.queued)).toEqual(['e1', 'e2']);
    for (const { done } of t.messages) expect(done.ack).toBe(1);
  });

  it('a commit cut off that PostgreSQL did not make is made again', async () => {
    const t = setUp(
      [
        (jobs) => {
          throw new UncertainIntake('1234', fresh(jobs), cutOff());
        },
        fresh,
      ],
      ['aborted'],
    );
    expect(await t.intake.commit(t.group, () => false)).toEqual({ acked: 2, deliveries: 2 });
    expect(t.calls).toEqual({ commits: 2, statuses: 1 });
    expect(eventsOf(t.queued)).toEqual(['e1', 'e2']);
  });

  it('any other failure is thrown at once, nothing queued or acknowledged', async () => {
    const t = setUp([
      () => {
        throw new Error('duplicate key value violates unique constraint');
      },
    ]);
    await expect(t.intake.commit(t.group, () => false)).rejects.toThrow('duplicate key');
    expect(t.calls.commits).toBe(1);
    expect(t.queued).toEqual([]);
    for (const { done } of t.messages) expect(done).toEqual({ ack: 0, nak: 0, working: 0 });
  });

  it('a replica that is stopping does not wait for PostgreSQL: the failure is thrown (the consumer hands the events back)', async () => {
    const t = setUp([
      () => {
        throw refused();
      },
    ]);
    await expect(t.intake.commit(t.group, () => true)).rejects.toThrow('ECONNREFUSED');
    expect(t.calls.commits).toBe(1);
    for (const { done } of t.messages) expect(done.ack).toBe(0);
  });
});
