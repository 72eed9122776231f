import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { writeJanusConfig } from './janus.mjs';

describe('writeJanusConfig', () => {
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'janus-conf-'));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  const read = (name: string) => fs.readFileSync(path.join(dir, 'conf', name), 'utf8');

  it('puts both WebSockets on the given host and ports, the admin secret in janus.jcfg and the admin key in every room plugin', () => {
    writeJanusConfig({
      dataDir: dir,
      wsPort: 18001,
      adminPort: 17001,
      adminSecret: 'admin "s"',
      roomAdminKey: 'rooms',
      sessionTimeoutSeconds: 7,
    });
    expect(read('janus.transport.websockets.jcfg')).toMatch(/ws_port = 18001\s+ws_ip = "127\.0\.0\.1"/);
    expect(read('janus.transport.websockets.jcfg')).toMatch(/admin_ws_port = 17001\s+admin_ws_ip = "127\.0\.0\.1"/);
    expect(read('janus.jcfg')).toContain('admin_secret = "admin \\"s\\""');
    expect(read('janus.jcfg')).toContain('session_timeout = 7');
    expect(read('janus.jcfg')).not.toContain('nat_1_1_mapping');
    for (const plugin of ['videoroom', 'audiobridge', 'textroom'])
      expect(read(`janus.plugin.${plugin}.jcfg`)).toContain('admin_key = "rooms"');
  });

  it('announces the public address in ICE candidates when given one', () => {
    writeJanusConfig({
      dataDir: dir,
      wsPort: 1,
      adminPort: 2,
      adminSecret: 'a',
      roomAdminKey: 'b',
      natMapping: '203.0.113.7',
      rtpPortRange: '50000-50099',
    });
    expect(read('janus.jcfg')).toContain('nat_1_1_mapping = "203.0.113.7"');
    expect(read('janus.jcfg')).toContain('rtp_port_range = "50000-50099"');
  });
});
