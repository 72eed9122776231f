import { runService } from '@switchboard/service-kit';
import { buildMediaAgent } from './app.js';
import { loadMediaAgentConfig, type MediaAgentConfig } from './config.js';

await runService('media-agent', loadMediaAgentConfig, (c) => buildMediaAgent(c as MediaAgentConfig));
