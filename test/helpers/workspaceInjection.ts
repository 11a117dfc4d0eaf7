/**
 * How a test-only entry (`dyingCli.ts`, `dyingDaemon.ts`, `insideCommitDaemon.ts`) reaches into every
 * workspace the real command opens in its process: it replaces `Workspace.open` and
 * `Workspace.prototype.commit` before the command runs, so the product needs no test seam beyond
 * `WorkspaceOptions`. Loads the workspace: import it from such an entry only, after `claimStdout`.
 */
import { Workspace, type CommitOptions, type CommitOutcome, type WorkspaceOptions } from '../../daemon/workspace/workspace.ts';

/** Every workspace opened from now on opens with `injected` in place of the caller's own of those options. */
export function openWorkspacesWith(injected: Pick<WorkspaceOptions, 'disk' | 'hooks'>): void {
  const open = Workspace.open.bind(Workspace);
  Workspace.open = (root: string, options: WorkspaceOptions = {}) => open(root, { ...options, ...injected });
}

/** Every commit from now on runs through `around`, which runs the commit itself by calling `commit`. */
export function runCommitsThrough(
  around: (workspace: Workspace, options: CommitOptions, commit: () => Promise<CommitOutcome>) => Promise<CommitOutcome>,
): void {
  const commit = Workspace.prototype.commit;
  Workspace.prototype.commit = function commitThrough(this: Workspace, plan, options) {
    return around(this, options, () => commit.call(this, plan, options));
  };
}
