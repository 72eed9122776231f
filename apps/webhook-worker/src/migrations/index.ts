import { Initial1763800000000 } from './1763800000000-initial.js';

export const migrations = [Initial1763800000000];
