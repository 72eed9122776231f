import { Initial1763800000000 } from './1763800000000-initial.js';
import { DeliveryLog1764100000000 } from './1764100000000-delivery-log.js';
import { DeliveryJob1764300000000 } from './1764300000000-delivery-job.js';
import { LighterDeliveryLog1764500000000 } from './1764500000000-lighter-delivery-log.js';

export const migrations = [
  Initial1763800000000,
  DeliveryLog1764100000000,
  DeliveryJob1764300000000,
  LighterDeliveryLog1764500000000,
];
