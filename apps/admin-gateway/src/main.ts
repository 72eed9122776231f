import { runService } from '@switchboard/service-kit';
import { buildAdminGateway } from './app.js';
import { loadGatewayConfig, type GatewayConfig } from './config.js';

await runService('admin-gateway', loadGatewayConfig, (c) => buildAdminGateway(c as GatewayConfig));
