import { Initial1763800000000 } from './1763800000000-initial.js';
import { EntitySets1764000000000 } from './1764000000000-entity-sets.js';

export const migrations = [Initial1763800000000, EntitySets1764000000000];
