package io.betree;

/** How much a returned {@link Transaction#commit()} (or a write without a transaction) promises. */
public enum Durability {
    /**
     * The commit's log record is on disk (fsync) before {@code commit()} returns. Concurrent commits
     * share one sync (group commit). The default.
     */
    SYNC,
    /**
     * The log is synced by a background thread at a fixed interval (50 ms by default, see
     * {@link EnvironmentOptions#syncInterval}). A crash may lose the commits of that last interval,
     * always a suffix: never a commit without the ones before it.
     */
    ASYNC,
    /**
     * The log is written but synced only at checkpoints and close. A crash of the process loses
     * nothing the operating system received; a crash of the machine may lose everything since the
     * last checkpoint, again only a suffix.
     */
    NONE
}
