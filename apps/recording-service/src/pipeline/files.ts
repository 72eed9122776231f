import fs from 'node:fs/promises';
import path from 'node:path';

/** Files in `dir` named `<base>.<ext>` that are complete (not `.part`/`.tmp`), newest first. */
export async function findMediaFile(dir: string, base: string): Promise<string | null> {
  let entries: string[];
  try {
    entries = await fs.readdir(dir);
  } catch {
    return null;
  }
  const candidates = entries.filter(
    (f) =>
      f.startsWith(`${base}.`) &&
      f.length > base.length + 1 &&
      !/\.(part|tmp)$/i.test(f) &&
      !f.slice(base.length + 1).includes('.'),
  );
  if (candidates.length === 0) return null;
  const stats = await Promise.all(
    candidates.map(async (f) => ({ f, s: await fs.stat(path.join(dir, f)).catch(() => null) })),
  );
  const files = stats.filter((x) => x.s?.isFile() && x.s.size > 0).sort((a, b) => b.s!.mtimeMs - a.s!.mtimeMs);
  return files[0] ? path.join(dir, files[0].f) : null;
}

/** Moves a file (rename, or copy and delete across file systems); creates the target directory. */
export async function moveFile(from: string, to: string): Promise<void> {
  await fs.mkdir(path.dirname(to), { recursive: true });
  try {
    await fs.rename(from, to);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EXDEV') throw e;
    const tmp = `${to}.part`;
    await fs.copyFile(from, tmp);
    await fs.rename(tmp, to);
    await fs.unlink(from);
  }
}

export async function sizeOf(file: string): Promise<number | null> {
  try {
    return (await fs.stat(file)).size;
  } catch {
    return null;
  }
}

export async function removeTree(dir: string): Promise<void> {
  await fs.rm(dir, { recursive: true, force: true });
}

/** Removes `dir` and then its empty parents up to (not including) `root`. */
export async function pruneEmptyDirs(dir: string, root: string): Promise<void> {
  let current = dir;
  while (current.startsWith(root + path.sep)) {
    try {
      await fs.rmdir(current);
    } catch {
      return;
    }
    current = path.dirname(current);
  }
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
