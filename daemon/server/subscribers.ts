/**
 * Who hears about a file changing outside patchd: the sessions (client connections) that read
 * or patched it, for as long as they hold the workspace open and the workspace watches the file
 * (a bounded number, the least recently touched dropped first). Forgetting a file no longer
 * watched keeps a long session's interests as bounded as the watches.
 */
import type { FileChange } from '../workspace/workspace.ts';

export type ChangeSink = (change: FileChange) => void;

export class FileSubscribers {
  readonly #sinks = new Map<string, ChangeSink>();
  readonly #sessionsByPath = new Map<string, Set<string>>();
  readonly #pathsBySession = new Map<string, Set<string>>();

  /** The session holds the workspace: its interests will be delivered to `sink`. */
  join(sessionId: string, sink: ChangeSink): void {
    this.#sinks.set(sessionId, sink);
  }

  /** The session let go of the workspace: forget it and everything it was interested in. */
  leave(sessionId: string): void {
    this.#sinks.delete(sessionId);
    for (const path of this.#pathsBySession.get(sessionId) ?? []) {
      const sessions = this.#sessionsByPath.get(path);
      sessions?.delete(sessionId);
      if (sessions?.size === 0) this.#sessionsByPath.delete(path);
    }
    this.#pathsBySession.delete(sessionId);
  }

  /** The session read or patched these paths. */
  note(sessionId: string, paths: Iterable<string>): void {
    if (!this.#sinks.has(sessionId)) return;
    let mine = this.#pathsBySession.get(sessionId);
    if (mine === undefined) this.#pathsBySession.set(sessionId, (mine = new Set()));
    for (const path of paths) {
      mine.add(path);
      let sessions = this.#sessionsByPath.get(path);
      if (sessions === undefined) this.#sessionsByPath.set(path, (sessions = new Set()));
      sessions.add(sessionId);
    }
  }

  /** The file is no longer watched: no session hears of it until one reads or patches it again. */
  forget(path: string): void {
    for (const sessionId of this.#sessionsByPath.get(path) ?? []) this.#pathsBySession.get(sessionId)?.delete(path);
    this.#sessionsByPath.delete(path);
  }

  /** Tells every interested session. */
  deliver(change: FileChange): void {
    for (const sessionId of this.#sessionsByPath.get(change.path) ?? []) this.#sinks.get(sessionId)?.(change);
  }
}
