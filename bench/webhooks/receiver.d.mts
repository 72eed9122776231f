// Types for receiver.mjs (the benchmark is plain JavaScript).

export declare function contentLength(head: string): number;

export interface Receiver {
  url: string;
  close(): Promise<void>;
}

export declare function startReceiver(options: {
  kind?: 'lean' | 'node';
  delayMs?: number;
  onBody: (text: string, at: number) => void;
}): Promise<Receiver>;
