package io.betree.internal.txn;

import io.betree.internal.fault.EnvironmentFailedException;
import io.betree.internal.fault.FailureListener;
import io.betree.internal.log.CommitRecord;
import io.betree.internal.log.DurableLog;
import io.betree.internal.tree.MvccHorizon;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeMap;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Supplier;

/**
 * Timestamps, snapshots and commits. A commit enters the commit gate, checks its keys against
 * commits made since its snapshot (first committer wins), takes the next timestamp, logs the
 * commit, applies its writes to the trees as messages carrying that timestamp, and only then
 * publishes the timestamp as visible: a snapshot sees all of a commit or none of it, in every
 * index. Syncing the log happens after the gate is left, so concurrent commits share syncs.
 *
 * <p>It is also the trees' {@link MvccHorizon}: the oldest live snapshot, kept up to date as
 * snapshots begin and end and commits become visible, so that the trees read it without a lock.
 *
 * <p>Thread-safe. The gate is private: others pass work to {@link #runExclusive} instead.
 */
public final class TransactionManager implements MvccHorizon {
    private final ReentrantLock commitGate = new ReentrantLock();
    private final TreeMap<Long, Integer> activeSnapshots = new TreeMap<>();
    private final ConflictTable conflicts = new ConflictTable();
    private final DurableLog log;
    private final FailureListener failures;
    private volatile long visibleTs;
    private volatile long horizon;
    private long clock;
    private volatile Throwable failure;

    /**
     * @param lastTs the newest timestamp already applied (from the checkpoint)
     * @param failures told when a commit was logged but not wholly applied
     */
    public TransactionManager(DurableLog log, long lastTs, FailureListener failures) {
        this.log = log;
        this.failures = failures;
        this.clock = lastTs;
        this.visibleTs = lastTs;
        this.horizon = lastTs;
    }

    /** Every commit at or below this timestamp is fully applied. */
    public long visibleTs() {
        return visibleTs;
    }

    /**
     * Runs {@code action} at a quiet point of the commit order: no commit is in progress while it
     * runs, and none starts until it returns. Index creation and the start of a checkpoint need
     * one, so that everything before it in the log is applied and nothing after it is.
     */
    public <T> T runExclusive(Supplier<T> action) {
        commitGate.lock();
        try {
            return action.get();
        } finally {
            commitGate.unlock();
        }
    }

    /** Starts a snapshot at the current visible timestamp; pair with {@link #endSnapshot}. */
    public long beginSnapshot() {
        commitGate.lock();
        try {
            long ts = visibleTs;
            activeSnapshots.merge(ts, 1, Integer::sum);
            updateHorizon();
            return ts;
        } finally {
            commitGate.unlock();
        }
    }

    /** Ends a snapshot started by {@link #beginSnapshot}. */
    public void endSnapshot(long ts) {
        commitGate.lock();
        try {
            activeSnapshots.computeIfPresent(ts, (k, n) -> n == 1 ? null : n - 1);
            updateHorizon();
            conflicts.prune(horizon);
        } finally {
            commitGate.unlock();
        }
    }

    /** Gate held: recomputes the oldest snapshot any reader may use. */
    private void updateHorizon() {
        horizon = activeSnapshots.isEmpty() ? visibleTs : Math.min(activeSnapshots.firstKey(), visibleTs);
    }

    /** The oldest snapshot any reader may use: versions older than it are invisible to all. Lock-free. */
    @Override
    public long oldestSnapshot() {
        return horizon;
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
     * @throws EnvironmentFailedException if an earlier commit was logged but not wholly applied
     */
    public long commit(long snapshotTs, List<WriteOp> ops) {
        long[] hashes = new long[ops.size()];
        List<CommitRecord.Op> logged = new ArrayList<>(ops.size());
        for (int i = 0; i < hashes.length; i++) {
            WriteOp op = ops.get(i);
            hashes[i] = ConflictTable.hash(op.indexId(), op.key());
            logged.add(op.logged());
        }
        commitGate.lock();
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
            long position = log.appendCommit(ts, logged);
            clock = ts;
            try {
                for (WriteOp op : ops) {
                    op.apply(ts);
                }
            } catch (RuntimeException | Error e) {
                // Logged but not fully applied: only recovery can make the trees whole again.
                failure = e;
                failures.failed(e);
                throw e;
            }
            if (!activeSnapshots.isEmpty()) {
                conflicts.record(ts, hashes);
            }
            visibleTs = ts;
            updateHorizon();
            return position;
        } finally {
            commitGate.unlock();
        }
    }

    /** Makes everything up to {@code position} durable. */
    public void syncTo(long position) {
        log.syncTo(position);
    }

    /** Applies a commit found in the log during recovery (no logging, no conflict checks). */
    public void recover(long ts, List<WriteOp> ops) {
        commitGate.lock();
        try {
            for (WriteOp op : ops) {
                op.apply(ts);
            }
            clock = Math.max(clock, ts);
            visibleTs = clock;
            updateHorizon();
        } finally {
            commitGate.unlock();
        }
    }

    private void checkUsable() {
        Throwable f = failure;
        if (f != null) {
            throw new EnvironmentFailedException("a commit failed half-way (" + f
                    + "); reopen the environment to recover", f);
        }
    }
}
