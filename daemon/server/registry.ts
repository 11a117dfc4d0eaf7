/**
 * Open workspaces, shared by every session (client connection) of the daemon — over stdio or
 * any number of socket connections. The same root (after realpath) always maps to the same id
 * and so to one workspace: one pool, one watcher, one lock table. Each session's opens are
 * counted, and a workspace with its pool is closed when the last holder closes it or
 * disconnects. Outside changes to a file go to the sessions that read or patched it.
 */
import { randomUUID } from 'node:crypto';
import type { FileChangedParams } from '../../protocol/index.ts';
import type { EnginePool } from '../pool/pool.ts';
import { resolveRoot } from '../workspace/stateDir.ts';
import type { Workspace } from '../workspace/workspace.ts';
import { UnknownWorkspaceError } from './failures.ts';
import { FileSubscribers } from './subscribers.ts';

/** An open workspace and the pool that runs its engine work. */
export interface OpenWorkspace {
  readonly id: string;
  readonly root: string;
  readonly workspace: Workspace;
  readonly pool: EnginePool;
}

/** What `open` returns: the workspace, and the recoveries its opening did and the log segments it found damaged (told to the first opener only). */
export interface OpenedWorkspace extends OpenWorkspace, Untold {}

type Untold = Pick<Workspace, 'recovered' | 'damagedLog'>;

export interface RegistryOptions {
  readonly openWorkspace: (root: string) => Promise<Workspace>;
  readonly createPool: () => EnginePool;
}

/** A client connection, as the registry sees it. */
export interface Session {
  readonly id: string;
  /** Sends `file/changed` to this session's client. */
  readonly onFileChanged: (params: FileChangedParams) => void;
}

interface Entry extends OpenWorkspace {
  /** The realpath the registry is keyed by. */
  readonly key: string;
  /** session id → how many times that session opened it. */
  readonly holders: Map<string, number>;
  readonly subscribers: FileSubscribers;
  /** Recoveries and damaged log segments not yet told to an opener. */
  untold: Untold;
}

const NOTHING_UNTOLD: Untold = { recovered: [], damagedLog: [] };

export class WorkspaceRegistry {
  readonly #options: RegistryOptions;
  readonly #byId = new Map<string, Entry>();
  readonly #byRoot = new Map<string, Promise<Entry>>();

  constructor(options: RegistryOptions) {
    this.#options = options;
  }

  /** Opens `root` for `session`, or joins it when already open. */
  async open(root: string, session: Session): Promise<OpenedWorkspace> {
    const key = await resolveRoot(root);
    for (;;) {
      const entry = await this.#entryFor(key);
      // Closed by its last holder while we waited: open it afresh.
      if (this.#byId.get(entry.id) !== entry) continue;
      entry.holders.set(session.id, (entry.holders.get(session.id) ?? 0) + 1);
      entry.subscribers.join(session.id, (change) => session.onFileChanged({ workspaceId: entry.id, ...change }));
      const { untold } = entry;
      entry.untold = NOTHING_UNTOLD;
      return { ...entry, ...untold };
    }
  }

  /** The session read or patched these (normalised) paths: it hears when they change outside patchd. */
  noteTouched(id: string, sessionId: string, paths: Iterable<string>): void {
    this.#byId.get(id)?.subscribers.note(sessionId, paths);
  }

  /** Whether a workspace with this id is open (it may close while a request on it runs). */
  isOpen(id: string): boolean {
    return this.#byId.has(id);
  }

  /** The open workspace with this id. */
  get(id: string): OpenWorkspace {
    const entry = this.#byId.get(id);
    if (entry === undefined) throw new UnknownWorkspaceError(id);
    return entry;
  }

  /** Drops one of `sessionId`'s holds; closes the workspace when none is left. */
  async close(id: string, sessionId: string): Promise<void> {
    const entry = this.#byId.get(id);
    const held = entry?.holders.get(sessionId) ?? 0;
    if (entry === undefined || held === 0) throw new UnknownWorkspaceError(id);
    if (held > 1) entry.holders.set(sessionId, held - 1);
    else this.#release(entry, sessionId);
    if (entry.holders.size === 0) await this.#dispose(entry);
  }

  /** Drops every hold of a session that went away. */
  async releaseSession(sessionId: string): Promise<void> {
    const released = [...this.#byId.values()].filter((entry) => this.#release(entry, sessionId));
    await Promise.all(released.filter((entry) => entry.holders.size === 0).map((entry) => this.#dispose(entry)));
  }

  /** Closes every workspace and pool (daemon exit). */
  async closeAll(): Promise<void> {
    await Promise.allSettled([...this.#byRoot.values()]);
    await Promise.all([...this.#byId.values()].map((entry) => this.#dispose(entry)));
  }

  #entryFor(key: string): Promise<Entry> {
    let pending = this.#byRoot.get(key);
    if (pending === undefined) {
      pending = this.#create(key);
      this.#byRoot.set(key, pending);
      pending.catch(() => this.#byRoot.delete(key));
    }
    return pending;
  }

  async #create(key: string): Promise<Entry> {
    const workspace = await this.#options.openWorkspace(key);
    const pool = this.#options.createPool();
    const subscribers = new FileSubscribers();
    const entry: Entry = {
      id: `ws_${randomUUID()}`, key, root: workspace.root, workspace, pool, holders: new Map(), subscribers, untold: { recovered: workspace.recovered, damagedLog: workspace.damagedLog },
    };
    workspace.onExternalChange((change) => subscribers.deliver(change));
    workspace.onUnwatched((path) => subscribers.forget(path));
    this.#byId.set(entry.id, entry);
    return entry;
  }

  /** Drops every hold of the session on the entry; true when it had one. */
  #release(entry: Entry, sessionId: string): boolean {
    entry.subscribers.leave(sessionId);
    return entry.holders.delete(sessionId);
  }

  async #dispose(entry: Entry): Promise<void> {
    // Unregister first, synchronously, so a concurrent open of the same root starts afresh.
    this.#byId.delete(entry.id);
    this.#byRoot.delete(entry.key);
    await Promise.allSettled([entry.pool.close(), entry.workspace.close()]);
  }
}
