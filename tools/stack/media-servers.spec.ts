import path from 'node:path';
import {
  appServiceOf,
  janusDataDir,
  janusNumber,
  MAX_MEDIA_SERVERS,
  mediaAgentEnv,
  mediaServerPairs,
  parseMediaServerCount,
  parseStartOptions,
} from './media-servers.mjs';
import { StackError } from './servers.mjs';

describe('parseStartOptions', () => {
  it('starts one media server when neither the flag nor the setting says otherwise', () => {
    expect(parseStartOptions([], {})).toEqual({ serversOnly: false, mediaServers: 1 });
    expect(parseStartOptions(['--servers-only'], { STACK_MEDIA_SERVERS: '' })).toEqual({
      serversOnly: true,
      mediaServers: 1,
    });
  });

  it('reads --media-servers N, --media-servers=N and STACK_MEDIA_SERVERS, the flag winning', () => {
    expect(parseStartOptions(['--media-servers', '2'], {}).mediaServers).toBe(2);
    expect(parseStartOptions(['--media-servers=3'], {}).mediaServers).toBe(3);
    expect(parseStartOptions([], { STACK_MEDIA_SERVERS: '2' }).mediaServers).toBe(2);
    expect(parseStartOptions(['--media-servers', '4'], { STACK_MEDIA_SERVERS: '2' }).mediaServers).toBe(4);
  });

  it('refuses a missing number, an unknown option and a bad setting, naming the culprit', () => {
    expect(() => parseStartOptions(['--media-servers'], {})).toThrow(/--media-servers needs a number/);
    expect(() => parseStartOptions(['--media-server', '2'], {})).toThrow('Unknown option --media-server.');
    expect(() => parseStartOptions([], { STACK_MEDIA_SERVERS: 'two' })).toThrow(/^STACK_MEDIA_SERVERS must be/);
  });
});

describe('parseMediaServerCount', () => {
  it.each(['1', ' 2 ', '4'])('accepts %j', (text) => {
    expect(parseMediaServerCount(text, 'X')).toBe(Number(text));
  });

  it.each(['0', '5', '-1', '2.5', '1e1', '', 'abc'])('refuses %j with a StackError', (text) => {
    expect(() => parseMediaServerCount(text, '--media-servers')).toThrow(StackError);
    expect(() => parseMediaServerCount(text, '--media-servers')).toThrow(
      `--media-servers must be a whole number from 1 to ${MAX_MEDIA_SERVERS}`,
    );
  });
});

describe('mediaServerPairs', () => {
  const where = { stackDir: '/s', logsDir: '/s/logs', agentPort: 8086, servicePorts: [8080, 8086, 8090] };

  it('keeps the names, ports and directories of a one-server stack', () => {
    expect(mediaServerPairs(1, where)).toEqual([
      {
        number: 1,
        janusName: 'janus',
        agentService: 'media-agent',
        wsPort: 18188,
        adminPort: 17188,
        rtpPortRange: '40000-40999',
        agentPort: 8086,
        janusDataDir: path.join('/s', 'janus'),
        agentDataDir: path.join('/s', 'media-agent'),
        janusLog: path.join('/s/logs', 'janus.log'),
      },
    ]);
  });

  it('gives every further pair the next ports, its own RTP range, directories and logs', () => {
    const pairs = mediaServerPairs(4, where);
    expect(pairs.map((p) => [p.janusName, p.agentService, p.wsPort, p.adminPort, p.agentPort])).toEqual([
      ['janus', 'media-agent', 18188, 17188, 8086],
      ['janus-2', 'media-agent-2', 18189, 17189, 8087],
      ['janus-3', 'media-agent-3', 18190, 17190, 8088],
      ['janus-4', 'media-agent-4', 18191, 17191, 8089],
    ]);
    expect(pairs.map((p) => p.rtpPortRange)).toEqual(['40000-40999', '41000-41999', '42000-42999', '43000-43999']);
    expect(pairs[1]).toMatchObject({
      janusDataDir: path.join('/s', 'janus-2'),
      agentDataDir: path.join('/s', 'media-agent-2'),
      janusLog: path.join('/s/logs', 'janus-2.log'),
    });
    expect(new Set(pairs.map((p) => p.agentDataDir)).size).toBe(4);
  });

  it('refuses an agent port that another service declares', () => {
    expect(() => mediaServerPairs(3, { ...where, servicePorts: [8086, 8088] })).toThrow(
      'media-agent-3 would listen on port 8088, which another service declares',
    );
  });
});

describe('stack.json names', () => {
  it('tells a Janus of any pair from the other processes, and the app a numbered agent runs', () => {
    expect(['janus', 'janus-2', 'janus-4', 'janusz', 'nats', 'media-agent'].map(janusNumber)).toEqual([
      1,
      2,
      4,
      null,
      null,
      null,
    ]);
    expect(appServiceOf('media-agent-3')).toBe('media-agent');
    expect(appServiceOf('media-agent')).toBe('media-agent');
    expect(appServiceOf('admin-gateway')).toBe('admin-gateway');
    expect(janusDataDir('/s', 1)).toBe(path.join('/s', 'janus'));
    expect(janusDataDir('/s', 3)).toBe(path.join('/s', 'janus-3'));
  });
});

describe('mediaAgentEnv', () => {
  const janusEnv = {
    JANUS_URL: 'ws://127.0.0.1:18189/',
    JANUS_ADMIN_URL: 'ws://127.0.0.1:17189/',
    MEDIA_AGENT_DATA_DIR: '/s/media-agent-2',
    MEDIA_SERVER_ADDRESSES: 'udp://127.0.0.1:41000-41999',
    JANUS_ADMIN_SECRET: 'secret',
  };
  const environment = {
    JANUS_URL: 'ws://elsewhere/',
    MEDIA_AGENT_DATA_DIR: '/tmp/x',
    MEDIA_SERVER_ADDRESSES: 'udp://192.0.2.1:40000-40999',
    MEDIA_SERVER_ID: '00000000-0000-4000-8000-000000000001',
    MEDIA_SERVER_REGION: 'eu',
  };

  it("keeps the pair's Janus and data directory over the environment, the rest overridable", () => {
    const env = mediaAgentEnv(janusEnv, 1, environment);
    expect(env).toMatchObject({
      JANUS_URL: janusEnv.JANUS_URL,
      JANUS_ADMIN_URL: janusEnv.JANUS_ADMIN_URL,
      MEDIA_AGENT_DATA_DIR: janusEnv.MEDIA_AGENT_DATA_DIR,
      MEDIA_SERVER_ADDRESSES: environment.MEDIA_SERVER_ADDRESSES,
      MEDIA_SERVER_ID: environment.MEDIA_SERVER_ID,
      MEDIA_SERVER_REGION: 'eu',
      JANUS_ADMIN_SECRET: 'secret',
    });
  });

  it('with several pairs, announces each RTP range and lets each agent keep its own id', () => {
    const env = mediaAgentEnv(janusEnv, 2, environment);
    expect(env.MEDIA_SERVER_ADDRESSES).toBe(janusEnv.MEDIA_SERVER_ADDRESSES);
    expect(env).not.toHaveProperty('MEDIA_SERVER_ID');
    expect(env.MEDIA_SERVER_REGION).toBe('eu');
  });
});
