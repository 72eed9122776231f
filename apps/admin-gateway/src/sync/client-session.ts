import type {
  ChannelClaim,
  ClientRef,
  ConnectionState,
  ConnectionType,
  EffectiveSettings,
  ServerPush,
  SyncConnectionState,
} from '@switchboard/contracts';
import { randomUUID } from 'node:crypto';
import type { SyncSocket } from './sync-socket.js';

export interface EdgeConnection {
  connectionId: string;
  channelId: string;
  type: ConnectionType;
  state: ConnectionState;
  localAudioMuted: boolean;
  localVideoMuted: boolean;
  mediaServerId: string | null;
  /** A downstream sfu connection: the upstream it receives; a peer connection: its other side. */
  remoteConnectionId: string | null;
  /** null while the registry has not answered the open yet (nor pushed settings for it). */
  settings: EffectiveSettings | null;
  /** `version` of the settings push applied last (null: none with a version): older pushes are stale. */
  settingsVersion: number | null;
}

/** The identity of a client across sockets: application, user, device and client ids. */
export function clientKey(ref: ClientRef): string {
  return JSON.stringify([ref.applicationId, ref.userId, ref.deviceId, ref.clientId]);
}

/**
 * A registered client as this gateway replica holds it: identity, claims, joined channels, open
 * connections and the socket it is attached to (none during its grace period after a drop).
 */
export class ClientSession {
  readonly key: string;
  readonly channels = new Map<string, ChannelClaim>();
  readonly connections = new Map<string, EdgeConnection>();
  /** Connections a kick removed (a push): an open answered after its kick is answered NotJoined. */
  readonly kicked = new WeakSet<EdgeConnection>();
  socket: SyncSocket | null = null;
  graceTimer?: NodeJS.Timeout;
  /** Pushes kept while no socket is attached (delivered on resume). */
  detached: ServerPush[] = [];
  droppedPushes = 0;
  /** Unregistered (by the client, the grace period or the server): nothing more is reported for it. */
  ended = false;
  /** This registration (reported with register and unregister: a stale unregister is ignored). */
  readonly sessionId = randomUUID();
  /**
   * Bumped by every change of the edge state (a batch of requests that change it, taken up or
   * answered; a push applied): a reconcile pass drops what it read of the registry when this moved
   * meanwhile (see SessionReconciler).
   */
  revision = 0;
  /** Batches of this client's requests that change the edge state being handled (prepared, not answered yet). */
  busy = 0;
  /**
   * The removals a reconcile pass is reporting for this client, until answered (never rejects). The
   * session's own reports wait for them: a join sent meanwhile must not overtake the leave.
   */
  corrections?: Promise<void>;

  constructor(
    readonly ref: ClientRef,
    readonly organizationId: string,
    public claims: ChannelClaim[],
    public roles: string[],
    public userAlias: string | null,
    public deviceAlias: string | null,
    public tag: string | null,
    readonly protocol: string,
  ) {
    this.key = clientKey(ref);
  }

  claimFor(channelId: string): ChannelClaim | undefined {
    return this.claims.find((c) => c.id === channelId);
  }

  connectionsIn(channelId: string): EdgeConnection[] {
    return [...this.connections.values()].filter((c) => c.channelId === channelId);
  }

  leaveLocally(channelId: string): void {
    this.channels.delete(channelId);
    for (const c of this.connectionsIn(channelId)) this.connections.delete(c.connectionId);
  }

  /**
   * Applies what a push changes in the client's state at the edge (kicks, settings, claims,
   * identity). False: a stale settings push (a version not above the one applied to its connection:
   * two registry replicas pushed out of order) or a repeated state, neither applied nor to be delivered.
   */
  apply(push: ServerPush): boolean {
    this.revision++;
    switch (push.type) {
      case 'kicked': {
        const gone = push.connectionId ? [this.connections.get(push.connectionId)] : this.connectionsIn(push.channelId);
        for (const connection of gone) if (connection) this.kicked.add(connection);
        if (push.connectionId) this.connections.delete(push.connectionId);
        else this.leaveLocally(push.channelId);
        return true;
      }
      case 'settings': {
        const connection = this.connections.get(push.connectionId);
        if (!connection) return true;
        // Without a version (a registry that does not send it) the push cannot be ordered: applied.
        if (typeof push.version === 'number') {
          if (connection.settingsVersion !== null && push.version <= connection.settingsVersion) return false;
          connection.settingsVersion = push.version;
        }
        connection.settings = push.settings;
        return true;
      }
      case 'claim.updated':
        this.claims = [...this.claims.filter((c) => c.id !== push.channelId), { ...push.claim, id: push.channelId }];
        if (this.channels.has(push.channelId)) this.channels.set(push.channelId, push.claim);
        return true;
      case 'client.updated':
        this.userAlias = push.userAlias;
        this.deviceAlias = push.deviceAlias;
        this.tag = push.tag;
        this.roles = push.roles;
        return true;
      case 'connection.state': {
        const connection = this.connections.get(push.connectionId);
        // A repeat (the reconcile pass may correct a state whose push is still on its way) is not delivered.
        if (connection?.state === push.state) return false;
        if (connection) connection.state = push.state;
        return true;
      }
      case 'connection.ended': {
        const connection = this.connections.get(push.connectionId);
        if (connection) this.kicked.add(connection);
        this.connections.delete(push.connectionId);
        return true;
      }
      // Nothing of the edge state: a message is delivered as is, `unregistered` ends the session (SessionStore).
      case 'message':
      case 'unregistered':
      case 'connection.offer':
      case 'upstream.opened':
      case 'upstream.closed':
      case 'connection.relayed':
      default:
        return true;
    }
  }

  describeChannels(): Array<{ channelId: string; claim: ChannelClaim }> {
    return [...this.channels].map(([channelId, claim]) => ({ channelId, claim }));
  }

  describeConnections(): SyncConnectionState[] {
    // Without settingsVersion, which is the edge's bookkeeping, not the client's business.
    return [...this.connections.values()].map((connection) => ({
      connectionId: connection.connectionId,
      channelId: connection.channelId,
      type: connection.type,
      state: connection.state,
      localAudioMuted: connection.localAudioMuted,
      localVideoMuted: connection.localVideoMuted,
      mediaServerId: connection.mediaServerId,
      settings: connection.settings,
    }));
  }
}
