import path from 'node:path';
import { recordingPathSegment } from '@switchboard/contracts';

/** Where the files of one channel recording are written (media servers, mux) and stored (move). */
export class RecordingPaths {
  readonly workRoot: string;
  readonly storageRoot: string;

  constructor(workDir: string, storageDir: string) {
    this.workRoot = path.resolve(workDir);
    this.storageRoot = path.resolve(storageDir);
  }

  /** `<RECORDINGS_DIR>/<applicationId>/<channelId>/<channelRecordingId>` */
  workDir(applicationId: string, channelId: string, channelRecordingId: string): string {
    return path.join(
      this.workRoot,
      recordingPathSegment(applicationId),
      recordingPathSegment(channelId),
      recordingPathSegment(channelRecordingId),
    );
  }

  /**
   * Key prefix of one channel recording in the storage target:
   * `<organizationId>/<applicationId>/<channelId>/<channelRecordingId>`
   */
  recordingPrefix(
    organizationId: string,
    applicationId: string,
    channelId: string,
    channelRecordingId: string,
  ): string {
    return [organizationId, applicationId, channelId, channelRecordingId].map(recordingPathSegment).join('/');
  }

  /** Object key (relative to the storage target): `<recordingPrefix>/<file>` */
  objectKey(
    organizationId: string,
    applicationId: string,
    channelId: string,
    channelRecordingId: string,
    fileName: string,
  ): string {
    if (!/^[A-Za-z0-9_-][A-Za-z0-9._-]*$/.test(fileName)) throw new Error(`unexpected recording file name ${fileName}`);
    return `${this.recordingPrefix(organizationId, applicationId, channelId, channelRecordingId)}/${fileName}`;
  }

  storagePath(objectKey: string): string {
    const resolved = path.resolve(this.storageRoot, ...objectKey.split('/'));
    if (!resolved.startsWith(this.storageRoot + path.sep)) throw new Error('object key leaves the storage directory');
    return resolved;
  }
}

export function audioBase(connectionRecordingId: string): string {
  return `${connectionRecordingId}.audio`;
}
export function videoBase(connectionRecordingId: string): string {
  return `${connectionRecordingId}.video`;
}

const TYPES: Record<string, string> = {
  '.webm': 'video/webm',
  '.mkv': 'video/x-matroska',
  '.mka': 'audio/x-matroska',
  '.ogg': 'audio/ogg',
  '.opus': 'audio/ogg',
  '.oga': 'audio/ogg',
  '.mp4': 'video/mp4',
  '.m4a': 'audio/mp4',
  '.wav': 'audio/wav',
};

export function contentTypeOf(file: string): string {
  return TYPES[path.extname(file).toLowerCase()] ?? 'application/octet-stream';
}
