// Types for media.mjs.

export interface TimelineEntry {
  /** Seconds from the start of the file. */
  at: number;
  audioMuted?: boolean;
  videoMuted?: boolean;
  audioDisabled?: boolean;
  videoDisabled?: boolean;
}

/** The part of the recording-service's `media.recordingTarget` answer the writer uses. */
export interface MediaTarget {
  directory: string;
  audioBase: string;
  videoBase: string;
  hasAudio?: boolean;
  hasVideo?: boolean;
  startTimestamp: number;
  stopTimestamp?: number | null;
  updates?: Array<{
    timestamp: number;
    audioMuted: boolean;
    videoMuted: boolean;
    audioDisabled: boolean;
    videoDisabled: boolean;
  }>;
}

export interface MediaOptions {
  durationSeconds?: number;
  frequency?: number;
  width?: number;
  height?: number;
  frameRate?: number;
  updates?: TimelineEntry[];
}

export interface WrittenMedia {
  audioFile: string | null;
  videoFile: string | null;
  durationSeconds: number;
}

export interface ProbedFile {
  formatName: string;
  durationSeconds: number;
  sizeBytes: number;
  streams: Array<{ type: string; codec: string; width: number | null; height: number | null }>;
}

export declare function run(bin: string, args: string[], options?: { timeoutMs?: number }): Promise<string>;
export declare function ffmpegAvailable(): Promise<boolean>;
export declare function intervals(
  updates: TimelineEntry[],
  durationSeconds: number,
  flag: 'audio' | 'video',
): Array<[number, number]>;
export declare function audioArgs(
  o: { durationSeconds: number; frequency?: number; updates?: TimelineEntry[] },
  output: string,
): string[];
export declare function videoArgs(
  o: { durationSeconds: number; width?: number; height?: number; frameRate?: number; updates?: TimelineEntry[] },
  output: string,
): string[];
export declare function writeConnectionMedia(target: MediaTarget, options?: MediaOptions): Promise<WrittenMedia>;
export declare function probeFile(file: string): Promise<ProbedFile>;
export declare function decodeFile(file: string): Promise<void>;
