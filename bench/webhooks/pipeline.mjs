// The webhook-worker's surroundings: a fake management-api answering the webhook resolve with one
// reliable webhook to the receiver, the event stream, and a publisher writing to it.
import { jetstreamManager } from '@nats-io/jetstream';
import { connect, nanos } from '@nats-io/transport-node';
import 'reflect-metadata';
import { Metrics, NatsClient, singleHeader } from '@switchboard/service-kit';
import { APP, NS, ORG } from './options.mjs';

/** Resolves to { nc, jsm, publish(event), close() } on the environment's NATS. */
export async function startPipeline(env, receiverUrl) {
  const nc = await connect({ servers: env.env.NATS_URL });
  // ---- fake management-api: one application with one reliable webhook ----
  const enc = new TextEncoder();
  const dec = new TextDecoder();
  nc.subscribe(`${NS}.management-api.v1.webhooks.resolve`, {
    queue: 'management-api',
    callback: (_e, msg) => {
      const packet = JSON.parse(dec.decode(msg.data));
      const response = {
        organizationId: ORG,
        sharedSecret: 'bench-secret',
        channelConfigId: null,
        webhooks: [
          {
            id: 'bench-hook',
            source: 'application',
            url: receiverUrl,
            events: null,
            batch: false,
            reliable: true,
            disabled: false,
          },
        ],
      };
      msg.respond(enc.encode(JSON.stringify({ id: packet.id, response, isDisposed: true })));
    },
  });
  const jsm = await jetstreamManager(nc);
  await jsm.streams.add({
    name: `${NS}-events`,
    subjects: [`${NS}.events.>`],
    max_age: nanos(3600_000),
    duplicate_window: nanos(120_000),
  });
  // Events go to the stream the way runtime-registry's EventPublisher sends them: through the
  // service kit's NatsClient (one reply inbox, coalesced writes), an operation's events as one
  // batch of JetStream publish requests (`requestRawMany`), the event id as `Nats-Msg-Id`, each
  // acknowledgement checked. Here an operation produces one event.
  const publisher = new NatsClient(
    { url: env.env.NATS_URL, namespace: NS, requestTimeoutMs: 5000, name: 'bench-publisher' },
    new Metrics('bench'),
  );
  const pnc = await publisher.connection$();
  const ACK_HEAD = Buffer.from('{"stream":');
  const ERROR_FIELD = Buffer.from('"error"');
  const publish = async (event) => {
    const [outcome] = await publisher.requestRawMany(
      pnc,
      [
        {
          subject: `${NS}.events.${event.type}`,
          data: Buffer.from(JSON.stringify({ event, applicationId: APP, organizationId: ORG })),
          headers: singleHeader('Nats-Msg-Id', event.id),
        },
      ],
      { timeoutMs: 5000 },
    );
    if (outcome.status === 'rejected') throw outcome.reason;
    const ack = Buffer.from(outcome.value.data.buffer, outcome.value.data.byteOffset, outcome.value.data.length);
    if (
      ack.length <= ACK_HEAD.length ||
      ack.compare(ACK_HEAD, 0, ACK_HEAD.length, 0, ACK_HEAD.length) !== 0 ||
      ack.indexOf(ERROR_FIELD) >= 0
    ) {
      throw new Error(`the event stream did not store event ${event.id}: ${ack.toString('utf8')}`);
    }
  };

  async function close() {
    await publisher.onApplicationShutdown();
    await nc.close();
  }
  return { nc, jsm, publish, close };
}
