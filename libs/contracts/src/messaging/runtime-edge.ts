/** What the client edge (admin-gateway) reports to runtime-registry, and the answers. */
import type {
  ChannelSnapshot,
  ConnectionState,
  ConnectionType,
  MessageBody,
  StreamDirection,
} from '../interface-a/index.js';
import type { ChannelClaim } from '../interface-b/index.js';
import type { WireError } from '../problem/index.js';
import type { ClientRef } from './runtime.js';
import type { MediaIceCandidate, MediaSessionDescription } from './media.js';
import type { EffectiveSettings, RemoteUpstream } from './runtime-push.js';

/** One signalling message of a `peer` connection: exactly one of offer, answer, candidates. */
export interface PeerSignal {
  offer?: MediaSessionDescription;
  answer?: MediaSessionDescription;
  candidates?: MediaIceCandidate[];
  completed?: boolean;
}

export interface StreamDescription {
  audio?: { direction: StreamDirection; muted?: boolean; disabled?: boolean; formats?: string[] } | null;
  /** `width`, `height` (pixels) and `frameRate`: what the client currently sends or receives, when it says. */
  video?: {
    direction: StreamDirection;
    muted?: boolean;
    disabled?: boolean;
    formats?: string[];
    maxPixelCount?: number;
    width?: number;
    height?: number;
    frameRate?: number;
  } | null;
  data?: { direction: StreamDirection; channelLabels?: string[] } | null;
}

export type EdgeReport =
  | {
      kind: 'client.register';
      client: ClientRef & {
        userAlias: string | null;
        deviceAlias: string | null;
        tag: string | null;
        roles: string[];
        protocol: string;
      };
      organizationId: string;
      gatewayId: string;
      claims: ChannelClaim[];
      /**
       * The registration this report starts (the gateway's session of the client, a UUID); a later
       * `client.unregister` naming another one is stale and ignored.
       */
      sessionId?: string;
    }
  | {
      kind: 'client.unregister';
      client: ClientRef;
      reason: 'left' | 'dropped' | 'kicked';
      /**
       * The gateway (and its session) ending the registration. The registry unregisters the client
       * only while it is still registered through that gateway (and session): an unregister that
       * arrives after the client registered again elsewhere (e.g. the grace-period unregister of an
       * old socket's gateway) changes nothing and answers ok.
       */
      gatewayId: string;
      sessionId?: string;
    }
  | { kind: 'client.join'; client: ClientRef; channelId: string; claim: ChannelClaim }
  /**
   * `sessionId` (leave, connection state and close): only while that registration of the client
   * holds it. A leave or close arriving after the client registered again in another session
   * changes nothing and answers ok; a state change answers NotFound.
   */
  | { kind: 'client.leave'; client: ClientRef; channelId: string; sessionId?: string }
  | {
      kind: 'client.update';
      client: ClientRef;
      userAlias?: string | null;
      deviceAlias?: string | null;
      tag?: string | null;
    }
  | {
      kind: 'client.message';
      client: ClientRef;
      channelId: string | null;
      message: MessageBody;
      to?: { userId?: string; deviceId?: string; clientId?: string };
    }
  | { kind: 'client.stats'; client: ClientRef; stats: Record<string, unknown> }
  | {
      kind: 'connection.open';
      client: ClientRef;
      channelId: string;
      connectionId: string;
      type: ConnectionType;
      tag: string | null;
      streams: StreamDescription;
      remoteConnectionId?: string | null;
    }
  | {
      kind: 'connection.state';
      client: ClientRef;
      channelId: string;
      connectionId: string;
      state: ConnectionState;
      error?: { code: string; message: string } | null;
      sessionId?: string;
    }
  | {
      kind: 'connection.update';
      client: ClientRef;
      channelId: string;
      connectionId: string;
      localAudioMuted?: boolean;
      localVideoMuted?: boolean;
      tag?: string | null;
      streams?: StreamDescription;
    }
  | {
      kind: 'connection.stats';
      client: ClientRef;
      channelId: string;
      connectionId: string;
      stats: Record<string, unknown>;
    }
  | { kind: 'connection.close'; client: ClientRef; channelId: string; connectionId: string; sessionId?: string }
  /** Signalling of a `peer` connection, pushed to the client of the connection its remoteConnectionId names. */
  | { kind: 'connection.relay'; client: ClientRef; channelId: string; connectionId: string; signal: PeerSignal };

/**
 * A read on the edge subject (`runtime-registry.v1.edge` with `report: { kind: 'gateway.sessions',
 * ... }`), not a report of a change: what the registry holds for each of these clients (the
 * sessions of the gateway asking), so the gateway can make its sessions converge after pushes it
 * lost. At most EDGE_SESSIONS_MAX_CLIENTS clients; answered EdgeSessionsResult.
 */
export interface EdgeSessionsRead {
  kind: 'gateway.sessions';
  clients: ClientRef[];
}
export const EDGE_SESSIONS_MAX_CLIENTS = 500;

/**
 * A read on the edge subject (`report: { kind: 'gateway.clients', ... }`): the clients the registry
 * holds as registered through gateway replica `gatewayId`, a page at a time (`cursor` "0" or absent
 * to start; `count` a hint, at most EDGE_SESSIONS_MAX_CLIENTS), so the gateway can find
 * registrations it has no session for (a register whose answer it lost). Answered
 * EdgeGatewayClientsResult (`next` null when done; a client may come twice).
 */
export interface EdgeGatewayClientsRead {
  kind: 'gateway.clients';
  gatewayId: string;
  cursor?: string;
  count?: number;
}
export interface EdgeGatewayClientsResult {
  clients: ClientRef[];
  next: string | null;
}
/** One per client asked, in order; null: not registered. */
export interface EdgeSessionsResult {
  clients: Array<EdgeSessionState | null>;
}

/**
 * A client as the registry holds it, for the gateway's check of its session (`gateway.sessions`):
 * every fact a push could have changed. Read per application in one atomic step.
 */
export interface EdgeSessionState {
  /** The gateway replica and session holding the registration (null: registered without one). */
  gatewayId: string | null;
  sessionId: string | null;
  userAlias: string | null;
  deviceAlias: string | null;
  tag: string | null;
  roles: string[];
  channels: Array<{
    channelId: string;
    claim: ChannelClaim;
    /**
     * The client's connections in the channel, with the effective settings a `settings` push carries and
     * the state (absent from registries older than the media plane): a lost `connection.state` push shows.
     */
    connections: Array<{ connectionId: string; settings: EffectiveSettings; state?: ConnectionState }>;
  }>;
  /** The application's settings sequence number when read: the `version` of the settings pushes sent up to then. */
  settingsVersion: number;
}

/**
 * Several reports in one request (`runtime-registry.v1.edge` with `report: { kind: 'batch', ... }`):
 * `sequences` are independent of each other (e.g. the queued requests of different sockets) and may
 * run concurrently; the reports of one sequence run in order, each exactly as if reported alone.
 * The first report of a sequence that fails ends it: the reports after it are not applied
 * (`skipped`), because the edge prepared them assuming the failed one succeeded and must prepare
 * them again. One exception: reports the registry applies together (one script run) whose events
 * could not be published yet are all applied, so each answers `Unavailable` (applied, its events
 * parked and published later) and none is `skipped`. At most EDGE_BATCH_MAX_REPORTS reports in all.
 */
export interface EdgeBatch {
  kind: 'batch';
  sequences: EdgeReport[][];
}
export const EDGE_BATCH_MAX_REPORTS = 1000;

/** The outcome of one report of a batch: its EdgeResults value, its error, or not applied. */
export type EdgeOutcome = { ok: unknown } | { error: WireError } | { skipped: true };
/** The answer to an EdgeBatch: the outcomes of each sequence, in order. */
export interface EdgeBatchResult {
  sequences: EdgeOutcome[][];
}

export interface EdgeResults {
  'client.register': { ok: true };
  'client.unregister': { ok: true };
  /** `upstreams`: the channel's publishing upstream sfu connections of other clients. */
  'client.join': { channel: ChannelSnapshot; settings: EffectiveSettings; upstreams?: RemoteUpstream[] };
  'client.leave': { ok: true };
  'client.update': { ok: true };
  'client.message': { delivered: number };
  'client.stats': { ok: true };
  'connection.open': { mediaServerId: string | null; settings: EffectiveSettings };
  'connection.state': { ok: true };
  'connection.update': { ok: true };
  'connection.stats': { ok: true };
  'connection.close': { ok: true };
  'connection.relay': { ok: true };
}
