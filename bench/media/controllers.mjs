// The two ways the media benchmark drives Janus: through media-agent over NATS (the control plane)
// and directly with a minimal janode script (the baseline). Same operations, same rooms.
import { randomInt, randomUUID } from 'node:crypto';
import { connect } from '@nats-io/transport-node';
import Janode from 'janode';
import VideoRoomPlugin from 'janode/plugins/videoroom';

Janode.Logger.setLevel('none');

/** media-agent commands over NATS, as the registry sends them. */
export async function agentController({ natsUrl, namespace, mediaServerId }) {
  const nc = await connect({ servers: natsUrl });
  const pattern = `media-agent.v1.${mediaServerId}.command`;
  const command = async (body) => {
    const msg = await nc.request(`${namespace}.${pattern}`, JSON.stringify({ pattern, data: body, id: randomUUID() }), {
      timeout: 10000,
    });
    const reply = msg.json();
    if (reply.err) throw new Error(`${body.kind}: ${JSON.stringify(reply.err)}`);
    return reply.response;
  };
  const ref = (room) => ({ applicationId: 'bench', channelId: room });
  return {
    name: 'agent',
    createRoom: (room) => command({ kind: 'room.create', ...ref(room), maxPublishers: 1000 }),
    publish: async (room, id, offer) =>
      (await command({ kind: 'publisher.join', ...ref(room), connectionId: id, offer })).answer,
    subscribe: async (room, id, publisherId) =>
      (await command({ kind: 'subscriber.join', ...ref(room), connectionId: id, remoteConnectionId: publisherId }))
        .offer,
    answer: (room, id, answer) => command({ kind: 'subscriber.answer', ...ref(room), connectionId: id, answer }),
    mute: (room, publisherId, muted) =>
      command({ kind: 'connections.moderate', ...ref(room), connectionIds: [publisherId], audioMuted: muted }),
    destroyRoom: (room) => command({ kind: 'room.destroy', ...ref(room) }),
    close: () => nc.close(),
  };
}

/** The same operations with janode straight on Janus (no agent, no NATS). */
export async function directController({ janusUrl, roomAdminKey }) {
  const connection = await Janode.connect({ address: { url: janusUrl } });
  const session = await connection.create(15);
  const control = await session.attach(VideoRoomPlugin);
  const rooms = new Map();
  return {
    name: 'direct',
    async createRoom(room) {
      const state = { janusRoom: randomInt(1, 2 ** 47), secret: randomUUID(), handles: new Map() };
      rooms.set(room, state);
      await control.create({
        room: state.janusRoom,
        secret: state.secret,
        admin_key: roomAdminKey,
        fir_freq: 10,
        max_publishers: 1000,
      });
    },
    async publish(room, id, offer) {
      const state = rooms.get(room);
      const handle = await session.attach(VideoRoomPlugin);
      const up = new Promise((resolve) => handle.once(Janode.EVENT.HANDLE_WEBRTCUP, resolve));
      const joined = await handle.joinConfigurePublisher({ room: state.janusRoom, display: id, jsep: offer });
      state.handles.set(id, { handle, feed: joined.feed, up });
      return joined.jsep;
    },
    async subscribe(room, id, publisherId) {
      const state = rooms.get(room);
      await state.handles.get(publisherId).up;
      const handle = await session.attach(VideoRoomPlugin);
      const joined = await handle.joinSubscriber({
        room: state.janusRoom,
        streams: [{ feed: state.handles.get(publisherId).feed }],
      });
      state.handles.set(id, { handle });
      return joined.jsep;
    },
    answer: (room, id, answer) => rooms.get(room).handles.get(id).handle.start({ jsep: answer }),
    async mute(room, publisherId, muted) {
      const state = rooms.get(room);
      await control.message({
        request: 'moderate',
        room: state.janusRoom,
        secret: state.secret,
        id: state.handles.get(publisherId).feed,
        mid: '0',
        mute: muted,
      });
    },
    async destroyRoom(room) {
      const state = rooms.get(room);
      await Promise.all([...state.handles.values()].map(({ handle }) => handle.detach().catch(() => {})));
      await control.destroy({ room: state.janusRoom, secret: state.secret });
      rooms.delete(room);
    },
    close: () => connection.close(),
  };
}
