import { Initial1763800000000 } from './1763800000000-initial.js';
import { UsageLedger1764200000000 } from './1764200000000-usage-ledger.js';
import { Pruning1764300000000 } from './1764300000000-pruning.js';

export const migrations = [Initial1763800000000, UsageLedger1764200000000, Pruning1764300000000];
