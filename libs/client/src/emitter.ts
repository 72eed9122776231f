/** Typed events: `Events` maps each event name to its listener's arguments. */
type Listener<Args extends unknown[]> = (...args: Args) => void;
type StoredListener = (...args: unknown[]) => void;

export class Emitter<Events extends { [Name in keyof Events]: unknown[] }> {
  private readonly listeners = new Map<keyof Events, Set<StoredListener>>();

  /** Adds a listener; returns the function that removes it. */
  on<Name extends keyof Events>(name: Name, listener: Listener<Events[Name]>): () => void {
    let set = this.listeners.get(name);
    if (!set) this.listeners.set(name, (set = new Set()));
    set.add(listener as unknown as StoredListener);
    return () => this.off(name, listener);
  }

  off<Name extends keyof Events>(name: Name, listener: Listener<Events[Name]>): void {
    this.listeners.get(name)?.delete(listener as unknown as StoredListener);
  }

  /** Resolves with the arguments of the next `name` event. */
  once<Name extends keyof Events>(name: Name): Promise<Events[Name]> {
    return new Promise((resolve) => {
      const remove = this.on(name, (...args) => {
        remove();
        resolve(args);
      });
    });
  }

  /** Calls each listener; one that throws does not stop the others (its error is rethrown asynchronously). */
  protected emit<Name extends keyof Events>(name: Name, ...args: Events[Name]): void {
    for (const listener of Array.from(this.listeners.get(name) ?? [])) {
      try {
        listener(...args);
      } catch (error) {
        queueMicrotask(() => {
          throw error;
        });
      }
    }
  }
}
