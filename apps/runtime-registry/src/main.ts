import { runService } from '@switchboard/service-kit';
import { buildRuntimeRegistry } from './app.js';
import { loadRegistryConfig, type RegistryConfig } from './config.js';

await runService('runtime-registry', loadRegistryConfig, (c) => buildRuntimeRegistry(c as RegistryConfig));
