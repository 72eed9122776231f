interface Entry<V> {
  value: V;
  fetchedAt: number;
}

/** The entries of one application, and what is being loaded for it. */
interface ApplicationEntries<V> {
  entries: Map<string, Entry<V>>;
  loading: Map<string, Promise<V>>;
  /** Bumped by `invalidate`: a load that started before it is not kept. */
  generation: number;
}

export interface ApplicationCacheOptions {
  /** How long an entry serves (0: nothing is kept; concurrent look-ups still share one load). */
  ttlMs: number;
  /**
   * Entries kept at most over all applications (the oldest entries of the application cached the longest ago go first).
   */
  maxEntries: number;
  /** The clock (ms); Date.now by default. */
  now?: () => number;
}

/**
 * A per-replica cache of what other services own about applications (secrets, channel configs,
 * webhooks), by application and a key within it. Concurrent look-ups of one key share one load;
 * a failed load is not kept; `invalidate(applicationId)` (a `management-api.v1.applications.changed`,
 * see `watchApplicationChanges`) drops every entry of the application at once, and an answer
 * loaded while it happened is returned to the callers that were waiting for it but not kept,
 * since it may predate the change.
 */
export class ApplicationCache<V> {
  private readonly applications = new Map<string, ApplicationEntries<V>>();
  private size = 0;
  private readonly now: () => number;

  constructor(private readonly options: ApplicationCacheOptions) {
    this.now = options.now ?? Date.now;
  }

  /**
   * The value of `key` in `applicationId`: kept when younger than `maxAgeMs` (at most the TTL), else
   * loaded. `load` gets `current()`, false once the application was invalidated after the load
   * started (for callers that keep something of the answer themselves).
   */
  get(
    applicationId: string,
    key: string,
    load: (current: () => boolean) => Promise<V>,
    maxAgeMs = this.options.ttlMs,
  ): Promise<V> {
    let app = this.applications.get(applicationId);
    const hit = app?.entries.get(key);
    if (hit && this.now() - hit.fetchedAt <= Math.min(maxAgeMs, this.options.ttlMs)) return Promise.resolve(hit.value);
    const pending = app?.loading.get(key);
    if (pending) return pending;
    if (!app) this.applications.set(applicationId, (app = { entries: new Map(), loading: new Map(), generation: 0 }));
    const loadingApp = app;
    const generation = app.generation;
    const current = () => loadingApp.generation === generation;
    const loaded = load(current)
      .then((value) => {
        if (current()) this.keep(loadingApp, key, value);
        return value;
      })
      .finally(() => {
        if (loadingApp.loading.get(key) === loaded) loadingApp.loading.delete(key);
        this.dropIfEmpty(applicationId, loadingApp);
      });
    app.loading.set(key, loaded);
    return loaded;
  }

  /** Age in ms of the entry kept for `key` (undefined when none). */
  ageOf(applicationId: string, key: string): number | undefined {
    const hit = this.applications.get(applicationId)?.entries.get(key);
    return hit ? this.now() - hit.fetchedAt : undefined;
  }

  /**
   * Drops every entry of the application. What is being loaded for it is not kept, and look-ups
   * from now on load anew rather than wait for a load that started before the change.
   */
  invalidate(applicationId: string): void {
    const app = this.applications.get(applicationId);
    if (!app) return;
    this.size -= app.entries.size;
    app.entries.clear();
    app.loading.clear();
    app.generation++;
    this.dropIfEmpty(applicationId, app);
  }

  private keep(app: ApplicationEntries<V>, key: string, value: V): void {
    if (this.options.ttlMs <= 0) return;
    if (!app.entries.has(key)) this.size++;
    app.entries.delete(key);
    app.entries.set(key, { value, fetchedAt: this.now() });
    // Over the bound: the oldest entries of the application cached the longest ago go first.
    while (this.size > this.options.maxEntries) {
      const [applicationId, oldest] = this.applications.entries().next().value as [string, ApplicationEntries<V>];
      const first = oldest.entries.keys().next();
      if (first.done) {
        // Only loads in flight: move it behind the others.
        this.applications.delete(applicationId);
        this.applications.set(applicationId, oldest);
        continue;
      }
      oldest.entries.delete(first.value);
      this.size--;
      this.dropIfEmpty(applicationId, oldest);
    }
  }

  /** An application with no entry and nothing loading is forgotten (unknown ids looked up do not pile up). */
  private dropIfEmpty(applicationId: string, app: ApplicationEntries<V>): void {
    if (app.entries.size === 0 && app.loading.size === 0 && this.applications.get(applicationId) === app)
      this.applications.delete(applicationId);
  }
}
