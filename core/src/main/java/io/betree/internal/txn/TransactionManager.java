package io.betree.internal.txn;

import io.betree.BetreeException;
import io.betree.WriteConflictException;
import java.util.List;
import java.util.TreeMap;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Timestamps, snapshots and commits. A commit takes the commit lock, checks its keys against
 * commits made since its snapshot (first committer wins), takes the next timestamp, logs the
 * commit, applies its writes to the trees as messages carrying that timestamp, and only then
 * publishes the timestamp as visible: a snapshot sees all of a commit or none of it, in every
 * index. Syncing the log happens after the lock is released, so concurrent commits share syncs.
 *
 * <p>Thread-safe.
 */
public final class TransactionManager {
    private final ReentrantLock commitLock = new ReentrantLock();
    private final TreeMap<Long, Integer> activeSnapshots = new TreeMap<>();
    private final ConflictTable conflicts = new ConflictTable();
    private final CommitLog log;
    private volatile long visibleTs;
    private long clock;
    private volatile Throwable failure;

    /** @param lastTs the newest timestamp already applied (from the checkpoint or recovery) */
    public TransactionManager(CommitLog log, long lastTs) {
        this.log = log;
        this.clock = lastTs;
        this.visibleTs = lastTs;
    }

    /** The lock commits and checkpoints serialize on. */
    public ReentrantLock commitLock() {
        return commitLock;
    }

    /** Every commit at or below this timestamp is fully applied. */
    public long visibleTs() {
        return visibleTs;
    }

    /** Starts a snapshot at the current visible timestamp; pair with {@link #endSnapshot}. */
    public long beginSnapshot() {
        commitLock.lock();
        try {
            long ts = visibleTs;
            activeSnapshots.merge(ts, 1, Integer::sum);
            return ts;
        } finally {
            commitLock.unlock();
        }
    }

    /** Ends a snapshot started by {@link #beginSnapshot}. */
    public void endSnapshot(long ts) {
        commitLock.lock();
        try {
            activeSnapshots.computeIfPresent(ts, (k, n) -> n == 1 ? null : n - 1);
            conflicts.prune(horizon());
        } finally {
            commitLock.unlock();
        }
    }

    /** The oldest snapshot any reader may use: versions older than it are invisible to all. */
    public long horizon() {
        commitLock.lock();
        try {
            return activeSnapshots.isEmpty() ? visibleTs : Math.min(activeSnapshots.firstKey(), visibleTs);
        } finally {
            commitLock.unlock();
        }
    }

    /** Number of live snapshots. */
    public int activeSnapshots() {
        commitLock.lock();
        try {
            return activeSnapshots.size();
        } finally {
            commitLock.unlock();
        }
    }

    /** Whether a commit after {@code snapshotTs} wrote {@code key} of index {@code indexId}. */
    public boolean conflicts(int indexId, byte[] key, long snapshotTs) {
        return conflicts.lastCommit(ConflictTable.hash(indexId, key)) > snapshotTs;
    }

    /**
     * Commits {@code ops} for a transaction whose snapshot is {@code snapshotTs} ({@code -1}: no
     * snapshot, as for a single write without a transaction).
     *
     * @return the log position the caller syncs to for durability
     * @throws WriteConflictException if a key was committed by another transaction after the snapshot
     */
    public long commit(long snapshotTs, List<WriteOp> ops) {
        long[] hashes = new long[ops.size()];
        for (int i = 0; i < hashes.length; i++) {
            hashes[i] = ConflictTable.hash(ops.get(i).indexId(), ops.get(i).key());
        }
        commitLock.lock();
        try {
            checkUsable();
            if (snapshotTs >= 0) {
                for (int i = 0; i < hashes.length; i++) {
                    if (conflicts.lastCommit(hashes[i]) > snapshotTs) {
                        throw new WriteConflictException("write conflict on a key of index id " + ops.get(i).indexId()
                                + ": another transaction committed it after this transaction's snapshot");
                    }
                }
            }
            long ts = clock + 1;
            long position = log.appendCommit(ts, ops);
            clock = ts;
            try {
                for (WriteOp op : ops) {
                    op.tree().write(op.type(), op.key(), op.value(), ts);
                }
            } catch (RuntimeException | Error e) {
                // Logged but not fully applied: only recovery can make the trees whole again.
                failure = e;
                throw e;
            }
            if (!activeSnapshots.isEmpty()) {
                conflicts.record(ts, hashes);
            }
            visibleTs = ts;
            return position;
        } finally {
            commitLock.unlock();
        }
    }

    /** Makes everything up to {@code position} durable. */
    public void syncTo(long position) {
        log.syncTo(position);
    }

    /** Applies a commit found in the log during recovery (no logging, no conflict checks). */
    public void recover(long ts, List<WriteOp> ops) {
        commitLock.lock();
        try {
            for (WriteOp op : ops) {
                op.tree().write(op.type(), op.key(), op.value(), ts);
            }
            clock = Math.max(clock, ts);
            visibleTs = clock;
        } finally {
            commitLock.unlock();
        }
    }

    private void checkUsable() {
        Throwable f = failure;
        if (f != null) {
            throw new BetreeException("a commit failed half-way (" + f + "); reopen the environment to recover", f);
        }
    }
}
