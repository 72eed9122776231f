// Types for the part of janode (1.8, ESM, JSDoc only) that janus-client.ts uses.
declare module 'janode' {
  import type { EventEmitter } from 'node:events';

  export interface JanodeServer {
    url: string;
    apisecret?: string;
  }

  export interface JanodeConfig {
    address: JanodeServer | JanodeServer[];
    /** Seconds between the attempts of one connect(); janus-client.ts retries itself. */
    retry_time_secs?: number;
    max_retries?: number;
    is_admin?: boolean;
  }

  /** The Janus `server_info` answer (the fields the agent reads). */
  export interface JanusServerInfo {
    name: string;
    version: number;
    version_string: string;
    'session-timeout': number;
    [field: string]: unknown;
  }

  export interface JanodeSession extends EventEmitter {
    readonly id: number;
    destroy(): Promise<void>;
    attach<H extends JanodeHandle>(plugin: JanodePlugin<H>): Promise<H>;
  }

  /** A plugin module's default export (e.g. janode/plugins/videoroom). */
  export interface JanodePlugin<H extends JanodeHandle> {
    id: string;
    Handle: new (...args: never[]) => H;
    EVENT: Record<string, string>;
  }

  export interface JsepInit {
    type: 'offer' | 'answer';
    sdp: string;
  }

  export interface TrickleCandidate {
    candidate: string;
    sdpMid?: string | null;
    sdpMLineIndex?: number | null;
  }

  export interface JanodeHandle extends EventEmitter {
    readonly id: number;
    detach(): Promise<void>;
    hangup(): Promise<unknown>;
    trickle(candidate: TrickleCandidate | TrickleCandidate[]): Promise<unknown>;
    trickleComplete(): Promise<unknown>;
    /** Any plugin request; resolves to Janus's whole answer (the plugin's in `plugindata.data`). */
    message(
      body: Record<string, unknown>,
      jsep?: JsepInit,
    ): Promise<{ plugindata?: { data?: Record<string, unknown> } }>;
  }

  export interface JanodeConnection extends EventEmitter {
    readonly id: number;
    getInfo(): Promise<JanusServerInfo>;
    /** A session; janode sends a keep-alive every `keepAliveSeconds` and destroys it when one fails. */
    create(keepAliveSeconds?: number): Promise<JanodeSession>;
    close(): Promise<void>;
    listSessions(): Promise<{ sessions: number[] }>;
    /** Admin API: the handles of one session. */
    listHandles(sessionId: number): Promise<{ handles: number[] }>;
    /** Admin API: one handle's state and statistics (layout: media-stats.ts reads it). */
    handleInfo(sessionId: number, handleId: number): Promise<{ info?: Record<string, unknown> }>;
  }

  const Janode: {
    connect(config: JanodeConfig): Promise<JanodeConnection>;
    Logger: { setLevel(level: 'none' | 'error' | 'warning' | 'info' | 'verbose' | 'debug'): string };
    EVENT: {
      CONNECTION_CLOSED: string;
      CONNECTION_ERROR: string;
      SESSION_DESTROYED: string;
      HANDLE_DETACHED: string;
      HANDLE_HANGUP: string;
      HANDLE_MEDIA: string;
      HANDLE_WEBRTCUP: string;
      HANDLE_SLOWLINK: string;
      HANDLE_ICE_FAILED: string;
    };
  };
  export default Janode;
}

declare module 'janode/plugins/videoroom' {
  import type { JanodeHandle, JanodePlugin, JsepInit } from 'janode';

  export interface VideoRoomHandle extends JanodeHandle {
    create(params: {
      room: number;
      description?: string;
      secret?: string;
      admin_key?: string;
      bitrate?: number;
      max_publishers?: number;
      fir_freq?: number;
    }): Promise<{ room: number }>;
    destroy(params: { room: number; secret?: string }): Promise<unknown>;
    exists(params: { room: number }): Promise<{ room: number; exists: boolean }>;
    list(params: { admin_key?: string }): Promise<{ list: Array<{ room: number; description?: string }> }>;
    kick(params: { room: number; feed: number; secret?: string }): Promise<unknown>;
    listParticipants(params: { room: number; secret?: string }): Promise<{
      participants: Array<{ feed: number; display?: string; publisher: boolean }>;
    }>;
    joinConfigurePublisher(params: { room: number; display?: string; jsep: JsepInit }): Promise<{
      feed: number;
      jsep?: JsepInit;
    }>;
    joinSubscriber(params: { room: number; streams: Array<{ feed: number; mid?: string }> }): Promise<{
      jsep?: JsepInit;
    }>;
    start(params: { jsep: JsepInit }): Promise<unknown>;
  }

  const VideoRoomPlugin: JanodePlugin<VideoRoomHandle>;
  export default VideoRoomPlugin;
}

declare module 'janode/plugins/audiobridge' {
  import type { JanodeHandle, JanodePlugin } from 'janode';

  export interface AudioBridgeHandle extends JanodeHandle {
    create(params: {
      room: number;
      description?: string;
      secret?: string;
      admin_key?: string;
      sampling_rate?: number;
    }): Promise<{ room: number }>;
    destroy(params: { room: number; secret?: string }): Promise<unknown>;
    list(): Promise<{ list: Array<{ room: number; description?: string }> }>;
    mute(params: { room: number; feed: number; secret?: string }): Promise<unknown>;
    unmute(params: { room: number; feed: number; secret?: string }): Promise<unknown>;
    kick(params: { room: number; feed: number; secret?: string }): Promise<unknown>;
  }

  const AudioBridgePlugin: JanodePlugin<AudioBridgeHandle>;
  export default AudioBridgePlugin;
}
