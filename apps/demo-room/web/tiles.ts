import type { DownstreamConnection, MediaTrackLike } from '@switchboard/client';

/** Above this audio level (0..1, from getStats) a participant counts as talking. */
const TALKING_LEVEL = 0.03;
const STATS_INTERVAL_MS = 500;
/** A kind whose received bytes did not grow for this many reads counts as muted. */
const STILL_READS_FOR_MUTED = 3;

interface Counters {
  framesDecoded: number;
  videoBytes: number;
  videoPackets: number;
  audioBytes: number;
  audioPackets: number;
  audioLevel: number;
}

/** Builds an element with text set through textContent only (names come from other clients). */
export function element<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  className?: string,
  text?: string,
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

async function readCounters(pc: RTCPeerConnection): Promise<Counters> {
  const counters: Counters = {
    framesDecoded: 0,
    videoBytes: 0,
    videoPackets: 0,
    audioBytes: 0,
    audioPackets: 0,
    audioLevel: 0,
  };
  (await pc.getStats()).forEach((stat: RTCInboundRtpStreamStats & { audioLevel?: number }) => {
    if (stat.type !== 'inbound-rtp') return;
    if (stat.kind === 'video') {
      counters.framesDecoded += stat.framesDecoded ?? 0;
      counters.videoBytes += stat.bytesReceived ?? 0;
      counters.videoPackets += stat.packetsReceived ?? 0;
    } else if (stat.kind === 'audio') {
      counters.audioBytes += stat.bytesReceived ?? 0;
      counters.audioPackets += stat.packetsReceived ?? 0;
      counters.audioLevel = Math.max(counters.audioLevel, stat.audioLevel ?? 0);
    }
  });
  return counters;
}

/**
 * One remote participant: the video of its upstream as received by a downstream connection, its name,
 * and its state read from the receiving side's stats (no bytes: muted; audio level: talking). The
 * counters are also written to data-* attributes, which the browser tests read.
 */
export class RemoteTile {
  readonly root = element('article', 'tile');
  private readonly video = element('video');
  private readonly state = element('span', 'state');
  private timer?: ReturnType<typeof setInterval>;
  private last?: Counters;
  private stillAudio = 0;
  private stillVideo = 0;

  constructor(
    readonly connection: DownstreamConnection,
    name: string,
  ) {
    this.video.autoplay = true;
    this.video.playsInline = true;
    const caption = element('div', 'caption');
    caption.append(element('span', 'name', name), this.state);
    this.root.append(this.video, caption);
    this.root.dataset.connectionId = connection.connectionId;
    this.root.dataset.remoteConnectionId = connection.remote.connectionId;
    if ('clientId' in connection.remote) this.root.dataset.clientId = connection.remote.clientId;
    for (const track of connection.remoteTracks) this.addTrack(track);
    connection.on('track', (track) => this.addTrack(track));
    this.timer = setInterval(() => void this.refresh(), STATS_INTERVAL_MS);
  }

  private addTrack(track: MediaTrackLike): void {
    const stream = (this.video.srcObject as MediaStream | null) ?? new MediaStream();
    if (!stream.getTracks().includes(track as MediaStreamTrack)) stream.addTrack(track as MediaStreamTrack);
    if (this.video.srcObject !== stream) this.video.srcObject = stream;
    // Autoplay with sound may wait for a click on the page; the video is decoded meanwhile.
    this.video.play().catch(() => undefined);
  }

  private async refresh(): Promise<void> {
    const counters = await readCounters(this.connection.peerConnection as unknown as RTCPeerConnection).catch(
      () => undefined,
    );
    if (!counters) return;
    const previous = this.last;
    this.last = counters;
    this.stillAudio = previous && counters.audioBytes <= previous.audioBytes ? this.stillAudio + 1 : 0;
    this.stillVideo = previous && counters.videoBytes <= previous.videoBytes ? this.stillVideo + 1 : 0;
    const audioMuted = this.stillAudio >= STILL_READS_FOR_MUTED;
    const videoMuted = this.stillVideo >= STILL_READS_FOR_MUTED;
    const talking = !audioMuted && counters.audioLevel > TALKING_LEVEL;
    const data = this.root.dataset;
    data.framesDecoded = String(counters.framesDecoded);
    data.videoBytes = String(counters.videoBytes);
    data.videoPackets = String(counters.videoPackets);
    data.audioBytes = String(counters.audioBytes);
    data.audioPackets = String(counters.audioPackets);
    data.audioMuted = String(audioMuted);
    data.videoMuted = String(videoMuted);
    this.root.classList.toggle('talking', talking);
    const words = [audioMuted && 'audio muted', videoMuted && 'video muted', talking && 'talking'].filter(Boolean);
    this.state.textContent = words.join(', ');
  }

  remove(): void {
    clearInterval(this.timer);
    this.root.remove();
  }
}

/** The local participant: the camera preview, and what the operator did to its media. */
export class LocalTile {
  readonly root = element('article', 'tile local');
  private readonly state = element('span', 'state');
  private readonly muted = { audio: '', video: '' };

  constructor(stream: MediaStream, name: string) {
    const video = element('video');
    video.autoplay = true;
    video.muted = true;
    video.playsInline = true;
    video.srcObject = stream;
    const caption = element('div', 'caption');
    caption.append(element('span', 'name', `${name} (you)`), this.state);
    this.root.append(video, caption);
    this.root.dataset.local = 'true';
  }

  /** `how`: '' (not muted), 'muted', 'muted by the operator', 'muted by the operator (unmuting disabled)'. */
  setMuted(kind: 'audio' | 'video', how: string): void {
    this.muted[kind] = how;
    this.root.dataset[kind === 'audio' ? 'audioMuted' : 'videoMuted'] = how || 'false';
    const words = (['audio', 'video'] as const)
      .filter((which) => this.muted[which])
      .map((which) => `${which === 'audio' ? 'microphone' : 'camera'} ${this.muted[which]}`);
    this.state.textContent = words.join(', ');
  }
}
