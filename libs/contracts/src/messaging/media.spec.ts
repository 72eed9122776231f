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
});
