/** Types of webrtc-peer.mjs: the werift peer setup shared by the media tests and the media benchmark. */
import type { RTCPeerConnection, RtpPacket } from 'werift';

export declare const AUDIO_PAYLOAD_TYPE: number;
export declare const VIDEO_PAYLOAD_TYPE: number;
export declare const AUDIO_INTERVAL_MS: number;
export declare const VIDEO_INTERVAL_MS: number;
export declare const VP8_KEY_FRAME: Buffer;
export declare const OPUS_FRAME: Buffer;

export interface SessionDescription {
  type: 'offer' | 'answer';
  sdp: string;
}

export interface RtpStream {
  next(payload: Buffer): RtpPacket;
}

export declare function peerConnection(): RTCPeerConnection;
export declare function gathered(pc: RTCPeerConnection): Promise<void>;
export declare function description(pc: RTCPeerConnection): SessionDescription;
export declare function connected(pc: RTCPeerConnection, timeoutMs?: number): Promise<void>;
export declare function rtpStream(options: { payloadType: number; step: number; marker?: boolean }): RtpStream;
export declare function publisherStreams(): { audio: RtpStream; video: RtpStream };
