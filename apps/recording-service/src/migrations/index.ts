import { Initial1763800000000 } from './1763800000000-initial.js';
import { Recordings1764100000000 } from './1764100000000-recordings.js';
import { Outbox1764300000000 } from './1764300000000-outbox.js';
import { ConnectionEnd1764700000000 } from './1764700000000-connection-end.js';
import { ChangeOutbox1764900000000 } from './1764900000000-change-outbox.js';
import { FileRemoval1765100000000 } from './1765100000000-file-removal.js';

export const migrations = [
  Initial1763800000000,
  Recordings1764100000000,
  Outbox1764300000000,
  ConnectionEnd1764700000000,
  ChangeOutbox1764900000000,
  FileRemoval1765100000000,
];
