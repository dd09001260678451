package io.betree.internal.txn;

import java.util.List;

/** Where commits are logged before they are applied. */
public interface CommitLog {
    /** Appends the commit's record; returns the log position to pass to {@link #syncTo}. */
    long appendCommit(long commitTs, List<WriteOp> ops);

    /** Returns once everything up to {@code position} is durable. */
    void syncTo(long position);
}
