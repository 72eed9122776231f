import { connect } from '@nats-io/transport-node';
import { testServers } from '@switchboard/testing';
import { startTestJanus } from '../../tools/testing/janus.js';

describe('harness', () => {
  it('has janus and nats', async () => {
    const janus = await startTestJanus();
    const nc = await connect({ servers: testServers().natsUrl });
    await nc.close();
    await janus.stop();
  });
});
