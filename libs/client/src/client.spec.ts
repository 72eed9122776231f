import { Client, type ClientOptions } from './client.js';
import { ClientError, SyncError } from './errors.js';
import {
  FakeGateway,
  FakePeerConnection,
  FakeTrack,
  noSettings,
  registerResult,
  tokenExpiringAt,
  until,
} from './fakes.testing.js';
import type { PeerConnectionConstructor } from './platform.js';

const farFuture = () => Math.floor(Date.now() / 1000) + 3600;

function setup(options: Partial<ClientOptions> = {}) {
  const gateway = new FakeGateway();
  const client = new Client({
    url: 'ws://gateway/sync',
    WebSocket: gateway.WebSocket,
    RTCPeerConnection: FakePeerConnection as unknown as PeerConnectionConstructor,
    reconnect: { initialDelayMs: 1, maxDelayMs: 5, giveUpAfterMs: 1000 },
    statsIntervalMs: 0,
    ...options,
  });
  return { gateway, client };
}

afterEach(() => {
  FakePeerConnection.instances.length = 0;
});

describe('Client requests', () => {
  it('matches answers to requests by id, even pipelined and answered out of order, with pushes in between', async () => {
    const { gateway, client } = setup();
    await client.register(tokenExpiringAt(farFuture()));
    gateway.handlers.message = () => undefined; // answered by hand below
    const messages: unknown[] = [];
    client.on('message', (push) => messages.push(push.message));
    const first = client.sendMessage('room', 'first');
    const second = client.sendMessage('room', 'second');
    const [firstFrame, secondFrame] = gateway.sent('message');
    expect(firstFrame!.id).not.toBe(secondFrame!.id);
    gateway.socket.answer(secondFrame!.id, { result: { delivered: 2 } });
    gateway.socket.push({ type: 'message', channelId: 'room', message: 'hello' as never, from: {} as never });
    gateway.socket.answer(firstFrame!.id, { result: { delivered: 1 } });
    await expect(first).resolves.toEqual({ delivered: 1 });
    await expect(second).resolves.toEqual({ delivered: 2 });
    expect(messages).toEqual(['hello']);
  });

  it('rejects a refused request with a SyncError carrying the code, details and request type', async () => {
    const { gateway, client } = setup();
    await client.register(tokenExpiringAt(farFuture()));
    const details = [{ field: 'channelId', message: 'no claim for this channel' }];
    gateway.handlers.join = () => ({ error: { code: 'Forbidden', message: 'Not allowed.', details } });
    const refused = await client.join('room').catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(SyncError);
    expect(refused).toMatchObject({ code: 'Forbidden', details, requestType: 'join' });
    expect(client.channels.has('room')).toBe(false);
  });

  it('reports an unreadable-frame error (id null) as an error event, and refuses a peer connection naming itself', async () => {
    const { gateway, client } = setup();
    await client.register(tokenExpiringAt(farFuture()));
    const errors: Error[] = [];
    client.on('error', (error) => errors.push(error));
    gateway.socket.frame({
      type: 'error',
      id: null,
      error: { code: 'InvalidFrame', message: 'The frame is not JSON.' },
    });
    expect(errors[0]).toMatchObject({ code: 'InvalidFrame', requestType: null });
    const itself = client.openPeer('room', 'same', { connectionId: 'same' });
    await expect(itself).rejects.toBeInstanceOf(ClientError);
    await expect(itself).rejects.toMatchObject({ code: 'InvalidState' });
  });

  it('fails the requests waiting for a register that is refused, and a publish without RTCPeerConnection', async () => {
    const { gateway, client } = setup({ RTCPeerConnection: undefined });
    gateway.handlers.register = () => ({ error: { code: 'ApplicationRefused', message: 'Disabled.' } });
    const registering = client.register('a.b.c');
    const joining = client.join('room');
    await expect(registering).rejects.toMatchObject({ code: 'ApplicationRefused' });
    await expect(joining).rejects.toMatchObject({ code: 'ApplicationRefused' });

    gateway.handlers.register = () => ({ result: registerResult() });
    await client.register('a.b.c');
    await expect(client.publish('room', { audio: new FakeTrack('audio') })).rejects.toMatchObject({
      name: 'ClientError',
      code: 'NoPlatform',
    });
  });

  it('refuses requests before register with InvalidState', async () => {
    const { client } = setup();
    await expect(client.join('room')).rejects.toMatchObject({ code: 'InvalidState' });
  });

  it('fails requests in flight with ConnectionLost when the socket drops', async () => {
    const { gateway, client } = setup();
    await client.register(tokenExpiringAt(farFuture()));
    gateway.handlers.ping = () => undefined;
    const ping = client.request('ping');
    gateway.socket.drop(1006);
    await expect(ping).rejects.toMatchObject({ code: 'ConnectionLost' });
  });
});

describe('Client resume', () => {
  it('reconnects after a drop and resumes the session: channels and connections kept, kept pushes delivered', async () => {
    const { gateway, client } = setup();
    const token = tokenExpiringAt(farFuture());
    await client.register(token);
    await client.join('room');
    const upstream = await client.publish('room', { audio: new FakeTrack('audio'), connectionId: 'up-1' });
    gateway.handlers.register = (_data, socket) => {
      // The kept pushes follow the result.
      setTimeout(() =>
        socket.push({ type: 'message', channelId: 'room', message: 'while away' as never, from: {} as never }),
      );
      return {
        result: registerResult({
          resumed: true,
          droppedPushes: 1,
          channels: [{ channelId: 'room', claim: {} as never }],
          connections: [
            {
              connectionId: 'up-1',
              channelId: 'room',
              type: 'sfu',
              state: 'connected',
              localAudioMuted: false,
              localVideoMuted: false,
              mediaServerId: 'media-1',
              settings: noSettings,
            },
          ],
        }),
      };
    };
    const messages: unknown[] = [];
    client.on('message', (push) => messages.push(push.message));
    const reconnected = client.once('reconnected');
    gateway.socket.drop(1006);
    expect(client.state).toBe('reconnecting');
    // A request made while reconnecting waits for the session, then goes on the new socket after register.
    const pinged = client.request('ping');
    expect(await reconnected).toEqual([{ resumed: true, droppedPushes: 1 }]);
    await pinged;
    expect(gateway.sockets).toHaveLength(2);
    expect(gateway.requests.filter((frame) => frame.socket === 1).map((frame) => frame.type)).toEqual([
      'register',
      'ping',
    ]);
    expect(gateway.sent('register').at(-1)!.data).toEqual({ token });
    await until(() => messages.length === 1);
    expect(messages).toEqual(['while away']);
    expect(client.channels.has('room')).toBe(true);
    expect(client.connections.get('up-1')).toBe(upstream);
    expect(upstream.state).toBe('connected');
    expect(FakePeerConnection.last.closed).toBe(false);
  });

  it('applies kept pushes after the resume result even when they arrive in the same turn', async () => {
    const { gateway, client } = setup();
    await client.register(tokenExpiringAt(farFuture()));
    await client.join('room');
    gateway.handlers.register = (_data, socket) => {
      queueMicrotask(() => {
        const channels = [{ channelId: 'room', claim: {} as never }];
        socket.answer(gateway.sent('register').at(-1)!.id, { result: registerResult({ resumed: true, channels }) });
        socket.push({ type: 'kicked', channelId: 'room' });
      });
      return undefined;
    };
    const kicked = client.once('kicked');
    gateway.socket.drop(1006);
    await client.once('reconnected');
    await kicked;
    expect(client.channels.has('room')).toBe(false);
  });

  it('ends the local connections when the grace period had passed (resumed: false, restore off)', async () => {
    const { gateway, client } = setup({ restore: false });
    await client.register(tokenExpiringAt(farFuture()));
    await client.join('room');
    const upstream = await client.publish('room', { audio: new FakeTrack('audio') });
    const ended = upstream.once('ended');
    gateway.socket.drop(1012);
    expect(await client.once('reconnected')).toEqual([{ resumed: false, droppedPushes: 0 }]);
    expect(await ended).toEqual([{ reason: 'session-lost' }]);
    expect(client.channels.size).toBe(0);
    expect(FakePeerConnection.last.closed).toBe(true);
  });

  it('restores a session it could not resume: joins again and publishes the same tracks on a new connection', async () => {
    const { gateway, client } = setup();
    await client.register(tokenExpiringAt(farFuture()));
    await client.join('room');
    const audio = new FakeTrack('audio');
    const lost = await client.publish('room', { audio, connectionId: 'up-1', tag: 'camera' });
    await lost.setAudioMuted(true);
    const restored = client.once('connection');
    gateway.socket.drop(1012);
    const [connection] = await restored;
    expect(lost.ended).toBe(true);
    expect(connection).not.toBe(lost);
    expect(connection.connectionId).not.toBe('up-1');
    expect(client.channels.has('room')).toBe(true);
    const afterDrop = gateway.requests.filter((frame) => frame.socket === 1);
    expect(afterDrop.map((frame) => frame.type)).toEqual([
      'register',
      'join',
      'connection.open',
      'connection.state',
      'connection.state',
      'connection.offer',
    ]);
    expect(afterDrop[2]!.data).toMatchObject({ channelId: 'room', tag: 'camera', streams: { audio: { muted: true } } });
    expect(FakePeerConnection.last.transceivers[0]!.track).toBe(audio);
    expect(audio.enabled).toBe(false);
  });

  it('retries with backoff while the gateway cannot be reached', async () => {
    const { gateway, client } = setup();
    await client.register(tokenExpiringAt(farFuture()));
    let refusals = 2;
    gateway.handlers.register = (_data, socket) => {
      if (refusals-- > 0) {
        queueMicrotask(() => socket.drop(1006));
        return undefined;
      }
      return { result: registerResult({ resumed: true }) };
    };
    const attempts: number[] = [];
    client.on('reconnecting', ({ attempt }) => attempts.push(attempt));
    gateway.socket.drop(4029);
    await client.once('reconnected');
    expect(attempts).toEqual([1, 2, 3]);
    expect(client.state).toBe('registered');
  });

  it.each([
    [4009, 'replaced'],
    [4010, 'unregistered'],
  ])('does not reconnect after close %i (%s)', async (code) => {
    const { gateway, client } = setup();
    await client.register(tokenExpiringAt(farFuture()));
    const closed = client.once('closed');
    gateway.socket.drop(code);
    expect((await closed)[0]).toMatchObject({ code });
    expect(client.state).toBe('closed');
    expect(gateway.sockets).toHaveLength(1);
    await expect(client.request('ping')).rejects.toMatchObject({ code: 'Closed' });
  });
});

describe('Client token refresh', () => {
  it('asks getToken before the token expires and resumes with the fresh token', async () => {
    const fresh = tokenExpiringAt(farFuture(), 'fresh');
    let asked = 0;
    const getToken = () => ((asked += 1), Promise.resolve(fresh));
    const { gateway, client } = setup({ getToken, tokenRefreshLeadSeconds: 1.5 });
    // Expires in 2 s: replaced 1.5 s before, but never sooner than 1 s from now.
    await client.register(tokenExpiringAt(Math.floor(Date.now() / 1000) + 2));
    const [token] = await client.once('token');
    expect(token).toBe(fresh);
    expect(asked).toBe(1);
    gateway.socket.drop(1006);
    await client.once('reconnected');
    expect(gateway.sent('register').at(-1)!.data).toEqual({ token: fresh });
  });

  it('gets a fresh token when a register is refused with TokenExpired, then registers again on a new socket', async () => {
    const fresh = tokenExpiringAt(farFuture(), 'fresh');
    const { gateway, client } = setup({ getToken: () => fresh });
    let first = true;
    gateway.handlers.register = (_data, socket) => {
      if (!first) return { result: registerResult() };
      first = false;
      setTimeout(() => socket.drop(4002));
      return { error: { code: 'TokenExpired', message: 'The token has expired.' } };
    };
    const stale = tokenExpiringAt(farFuture(), 'stale');
    const result = await client.register(stale);
    expect(result.clientId).toBe('client');
    expect(gateway.sockets).toHaveLength(2);
    expect(gateway.sent('register').map((frame) => frame.data!.token)).toEqual([stale, fresh]);
    expect(client.state).toBe('registered');
  });

  it('does not retry a TokenInvalid register and lets the app register again', async () => {
    const { gateway, client } = setup({ getToken: () => 'never asked' });
    gateway.handlers.register = () => ({ error: { code: 'TokenInvalid', message: 'Bad signature.' } });
    await expect(client.register('bad.token.here')).rejects.toMatchObject({ code: 'TokenInvalid' });
    expect(client.state).toBe('idle');
    expect(gateway.sockets).toHaveLength(1);
  });
});

describe('Client channels and session end', () => {
  it('resumes after a join token the gateway refused with a close (4001), keeping the session', async () => {
    const { gateway, client } = setup();
    await client.register(tokenExpiringAt(farFuture()));
    gateway.handlers.join = (_data, socket) => {
      setTimeout(() => socket.drop(4001));
      return { error: { code: 'TokenInvalid', message: 'Bad signature.' } };
    };
    gateway.handlers.register = () => ({ result: registerResult({ resumed: true }) });
    await expect(client.join('room', { token: 'join.token.bad' })).rejects.toMatchObject({ code: 'TokenInvalid' });
    expect(gateway.sent('join')[0]!.data).toEqual({ channelId: 'room', token: 'join.token.bad' });
    expect(await client.once('reconnected')).toEqual([{ resumed: true, droppedPushes: 0 }]);
  });

  it('leave ends the connections of the channel; unregister closes for good', async () => {
    const { gateway, client } = setup();
    await client.register(tokenExpiringAt(farFuture()));
    await client.join('room');
    await client.join('hall');
    const inRoom = await client.publish('room', { audio: new FakeTrack('audio') });
    const inHall = await client.joinMixer('hall', { audio: new FakeTrack('audio') });
    const left = inRoom.once('ended');
    await client.leave('room');
    expect(await left).toEqual([{ reason: 'left' }]);
    expect(inHall.ended).toBe(false);
    expect(gateway.sent('connection.open').map((frame) => frame.data!.type)).toEqual(['sfu', 'mcu']);
    expect(gateway.sent('connection.open')[1]!.data!.streams).toEqual({
      audio: { direction: 'sendrecv', muted: false },
      video: null,
    });

    gateway.handlers.unregister = (_data, socket) => {
      setTimeout(() => socket.drop(1000));
      return { result: {} };
    };
    const closed = client.once('closed');
    await client.unregister();
    expect((await closed)[0]).toMatchObject({ code: 1000 });
    expect(inHall.ended).toBe(true);
    expect(client.state).toBe('closed');
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(gateway.sockets).toHaveLength(1);
  });
});

describe('Client without resume, with every push (load clients)', () => {
  it('emits every push as a push event too, after its typed event', async () => {
    const { gateway, client } = setup();
    await client.register(tokenExpiringAt(farFuture()));
    const seen: string[] = [];
    client.on('kicked', () => seen.push('kicked event'));
    client.on('push', (push) => seen.push(`push ${push.type}`));
    gateway.socket.push({ type: 'kicked', channelId: 'room' } as never);
    gateway.socket.push({ type: 'message', channelId: 'room', message: 'hi' as never, from: {} as never });
    await until(() => seen.length === 3);
    expect(seen).toEqual(['kicked event', 'push kicked', 'push message']);
  });

  it('with reconnect false, a dropped socket is final: closed with its code, no new socket', async () => {
    const { gateway, client } = setup({ reconnect: false });
    await client.register(tokenExpiringAt(farFuture()));
    const closed = client.once('closed');
    let reconnecting = false;
    client.on('reconnecting', () => (reconnecting = true));
    gateway.socket.drop(1012, 'restarting');
    expect((await closed)[0]).toMatchObject({ code: 1012, reason: 'restarting' });
    expect(client.state).toBe('closed');
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(reconnecting).toBe(false);
    expect(gateway.sockets).toHaveLength(1);
    await expect(client.request('ping')).rejects.toMatchObject({ code: 'Closed' });
  });

  it("sends the requests of register's pipelined callback on the same socket before the register result", async () => {
    const { gateway, client } = setup();
    let registerId = 0;
    gateway.handlers.register = () => undefined; // answered by hand below
    let joined: Promise<unknown> | undefined;
    const registered = client.register(tokenExpiringAt(farFuture()), {
      pipelined: () => {
        registerId = gateway.sent('register')[0]!.id;
        joined = client.join('room');
      },
    });
    await until(() => gateway.requests.length === 2);
    expect(gateway.requests.map((frame) => [frame.type, frame.socket])).toEqual([
      ['register', 0],
      ['join', 0],
    ]);
    gateway.socket.answer(registerId, { result: registerResult() });
    await registered;
    await joined;
    expect(client.channels.has('room')).toBe(true);
  });
});
