/** An event emitter of the user's (a client library's connection, or one of its nodes). */
export interface Emitter {
  on(event: string, listener: (...args: never[]) => void): unknown;
  off(event: string, listener: (...args: never[]) => void): unknown;
}

type Listener = (...args: unknown[]) => void;

/** Per emitter and event: holdfast's listeners, behind the one listener that calls them. */
const shared = new WeakMap<Emitter, Map<string, { readonly listeners: Set<Listener>; readonly dispatch: Listener }>>();

/**
 * Listens to `event` on a connection of the user's through one listener per connection
 * and event, whatever the number of LockClients on it: each client would otherwise add
 * its own (two or more per event), and a handful of them on one connection passes
 * Node's limit of 10 and prints MaxListenersExceededWarning in the user's process. The
 * listeners run in the order they were added, at the place of the first one among the
 * connection's listeners. Returns the unsubscriber; the last one removes the shared
 * listener, leaving the connection as it was.
 */
export function listen(emitter: Emitter, event: string, listener: (...args: never[]) => void): () => void {
  let events = shared.get(emitter);
  if (!events) shared.set(emitter, (events = new Map()));
  let entry = events.get(event);
  if (!entry) {
    const listeners = new Set<Listener>();
    // A snapshot: a listener that removes itself, or adds another, changes the next event only.
    const dispatch: Listener = (...args) => {
      for (const l of [...listeners]) l(...args);
    };
    entry = { listeners, dispatch };
    events.set(event, entry);
    emitter.on(event, dispatch);
  }
  // Its own wrapper: the same function added twice is two listeners, as with on().
  const own: Listener = (...args) => (listener as Listener)(...args);
  entry.listeners.add(own);
  const { listeners, dispatch } = entry;
  return () => {
    if (!listeners.delete(own) || listeners.size > 0) return;
    emitter.off(event, dispatch);
    if (events.get(event)?.dispatch === dispatch) events.delete(event);
  };
}
