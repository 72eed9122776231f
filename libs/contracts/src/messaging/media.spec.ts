import { ContractViolation } from '../validation/validate.js';
import { mediaAgentEventEnvelope, MediaAgentSubjects, parseMediaAgentCommand } from './media.js';

const channel = { applicationId: 'app', channelId: 'ch' };

describe('media-agent contract', () => {
  it('names the subjects of one media server', () => {
    expect(MediaAgentSubjects.command('s1')).toBe('media-agent.v1.s1.command');
    expect(MediaAgentSubjects.events('s1')).toBe('media-agent.v1.s1.events');
  });

  it('accepts each kind with its parameters', () => {
    const offer = { type: 'offer', sdp: 'v=0\r\n' } as const;
    const join = { kind: 'publisher.join', ...channel, connectionId: 'c1', offer };
    expect(parseMediaAgentCommand(join)).toEqual(join);
    const trickle = {
      kind: 'connection.trickle',
      ...channel,
      connectionId: 'c1',
      candidates: [{ candidate: 'candidate:1 1 udp 1 127.0.1.1 4000 typ host', sdpMid: '0', usernameFragment: 'u' }],
      completed: true,
    };
    expect(parseMediaAgentCommand(trickle)).toEqual(trickle);
  });

  it('names the offending field, an unknown kind and an unknown field', () => {
    const refusal = (value: unknown) => {
      try {
        parseMediaAgentCommand(value);
      } catch (e) {
        return (e as ContractViolation).errors;
      }
      throw new Error('accepted');
    };
    expect(
      refusal({ kind: 'publisher.join', ...channel, connectionId: 'c1', offer: { type: 'pranswer', sdp: 'x' } }),
    ).toEqual([expect.objectContaining({ field: 'offer.type' })]);
    expect(refusal({ kind: 'room.explode', ...channel })).toEqual([
      { field: 'kind', message: 'unknown kind "room.explode"' },
    ]);
    expect(refusal({ kind: 'room.create', ...channel, janusRoom: 1 })).toEqual([
      expect.objectContaining({ field: 'janusRoom', message: 'unknown field' }),
    ]);
    expect(refusal({ kind: 'connections.kick', ...channel, connectionIds: [] })).toEqual([
      expect.objectContaining({ field: 'connectionIds' }),
    ]);
    expect(() => parseMediaAgentCommand('room.create')).toThrow(ContractViolation);
  });

  it('checks an event envelope', () => {
    const envelope = {
      mediaServerId: 's1',
      time: '2026-11-28T10:00:00.000Z',
      event: { kind: 'subscription.ended', ...channel, connectionId: 'd1', remoteConnectionId: 'c1', reason: 'kicked' },
    };
    expect(mediaAgentEventEnvelope.check(envelope)).toBe(true);
    expect(mediaAgentEventEnvelope.check({ ...envelope, event: { ...envelope.event, reason: 'bored' } })).toBe(false);
  });

  it('accepts the mixer commands and the statistics events', () => {
    const mute = { kind: 'mixer.mute', ...channel, connectionIds: ['c1'], muted: true };
    expect(parseMediaAgentCommand(mute)).toEqual(mute);
    expect(() => parseMediaAgentCommand({ kind: 'mixer.mute', ...channel, connectionIds: ['c1'] })).toThrow(
      ContractViolation,
    );
    const time = '2026-11-28T10:00:00.000Z';
    const server = {
      kind: 'server.stats',
      activeConnections: 2,
      pendingConnections: 0,
      rooms: 1,
      mixers: 0,
      bitrateReceived: 1,
      bitrateSent: 2,
    };
    expect(mediaAgentEventEnvelope.check({ mediaServerId: 's1', time, event: server })).toBe(true);
    const audio = {
      packetsReceived: 1,
      bytesReceived: 1,
      packetsSent: 0,
      bytesSent: 0,
      bitrateReceived: 8,
      bitrateSent: 0,
      packetsLost: 0,
      packetsLostByRemote: 0,
      jitterMs: 1,
      jitterRemoteMs: 0,
      nacksReceived: 0,
      nacksSent: 0,
    };
    const stats = { kind: 'connection.stats', ...channel, connectionId: 'c1', role: 'mixer', connected: true, audio };
    expect(mediaAgentEventEnvelope.check({ mediaServerId: 's1', time, event: stats })).toBe(true);
    expect(mediaAgentEventEnvelope.check({ mediaServerId: 's1', time, event: { ...stats, role: 'peer' } })).toBe(false);
  });

  it('accepts connection.record with its flag, and refuses it without one', () => {
    const record = { kind: 'connection.record', ...channel, connectionId: 'c1', recording: true };
    expect(parseMediaAgentCommand(record)).toEqual(record);
    expect(() => parseMediaAgentCommand({ ...record, recording: 'yes' })).toThrow(ContractViolation);
    expect(() => parseMediaAgentCommand({ kind: 'connection.record', ...channel, connectionId: 'c1' })).toThrow(
      ContractViolation,
    );
  });
});
