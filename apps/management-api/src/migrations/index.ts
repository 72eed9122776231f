import { Initial1763800000000 } from './1763800000000-initial.js';
import { EntitySets1764000000000 } from './1764000000000-entity-sets.js';
import { ParkedEvents1764200000000 } from './1764200000000-parked-events.js';
import { OrganizationDisabled1764300000000 } from './1764300000000-organization-disabled.js';
import { ApiKeyDisabled1764600000000 } from './1764600000000-api-key-disabled.js';

export const migrations = [
  Initial1763800000000,
  EntitySets1764000000000,
  ParkedEvents1764200000000,
  OrganizationDisabled1764300000000,
  ApiKeyDisabled1764600000000,
];
