import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

const ID_FILE = 'media-server-id';

/**
 * The id this agent registers its Janus under: MEDIA_SERVER_ID when set, else a UUID made on the
 * first start and kept in `<dataDir>/media-server-id`, so a restarted agent is the same server.
 */
export function resolveMediaServerId(configured: string | undefined, dataDir: string): string {
  if (configured) return configured;
  const file = path.join(dataDir, ID_FILE);
  try {
    const kept = fs.readFileSync(file, 'utf8').trim();
    if (kept) return kept;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
  }
  fs.mkdirSync(dataDir, { recursive: true });
  const id = randomUUID();
  // Written beside and renamed, so a crash never leaves an empty id behind.
  fs.writeFileSync(`${file}.tmp`, `${id}\n`);
  fs.renameSync(`${file}.tmp`, file);
  return id;
}
