package io.betree.internal.txn;

import io.betree.internal.fault.EnvironmentFailedException;
import io.betree.internal.fault.FailureListener;
import io.betree.internal.log.CommitPartsRecord;
import io.betree.internal.log.CommitRecord;
import io.betree.internal.log.CommitRecord.Op;
import io.betree.internal.log.DurableLog;
import io.betree.internal.tree.BeTree;
import io.betree.internal.tree.MvccHorizon;
import io.betree.internal.txn.spill.CommitRun;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.IntFunction;
import java.util.function.Supplier;

/**
 * Timestamps, snapshots and the commit pipeline. The commit gate covers only what must be ordered:
 * a commit checks its keys against commits made since its snapshot (first committer wins), takes
 * the next timestamp, appends its record to the log and takes its turn at each tree it writes.
 * Outside the gate it applies its writes to the trees as messages carrying its timestamp, each
 * tree in turn order ({@link ApplyTurns}), so commits to different trees, and the log append of
 * one commit and the tree work of another, overlap. A commit becomes visible when it and every
 * earlier commit are applied ({@link Watermark}): a snapshot sees all of a commit or none of it,
 * in every index. Syncing the log happens outside the gate too, so concurrent commits share syncs.
 *
 * <p>It is also the trees' {@link MvccHorizon}: the oldest live snapshot or, when older, the
 * watermark, read without a lock.
 *
 * <p>Thread-safe. The gate is private: others pass work to {@link #runExclusive} instead.
 */
public final class TransactionManager implements MvccHorizon {
    private final ReentrantLock commitGate = new ReentrantLock();
    /** Guarded by the gate. */
    private final TreeMap<Long, Integer> activeSnapshots = new TreeMap<>();
    /** Guarded by the gate. */
    private final ConflictTable conflicts = new ConflictTable();
    private final ApplyTurns<BeTree> turns = new ApplyTurns<>();
    private final LogRetention retention = new LogRetention();
    /** Large commits being applied now; they wait for the flushers between batches. */
    private final java.util.concurrent.atomic.AtomicInteger largeApplies = new java.util.concurrent.atomic.AtomicInteger();
    private final AtomicLong writerWaitNanos = new AtomicLong();
    private final DurableLog log;
    private final FailureListener failures;
    private final Watermark watermark;
    /** The oldest live snapshot, or {@link Long#MAX_VALUE} when there is none; written in the gate. */
    private volatile long oldestSnapshot = Long.MAX_VALUE;
    /**
     * While a snapshot is being registered, a watermark read before the snapshot's own (so at or
     * below it); otherwise {@link Long#MAX_VALUE}. Written in the gate; see {@link #oldestSnapshot()}.
     */
    private volatile long snapshotBeginning = Long.MAX_VALUE;
    /** The last timestamp handed out. Guarded by the gate. */
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
        this.watermark = new Watermark(lastTs);
    }

    /** Every commit at or below this timestamp is fully applied (the visibility watermark). */
    public long visibleTs() {
        return watermark.visible();
    }

    /**
     * Runs {@code action} at a quiet point of the commit order: every commit in the log is applied
     * when it starts, and no commit starts until it returns. Index creation and the start of a
     * checkpoint need one, so that everything before it in the log is in the trees and nothing
     * after it is.
     *
     * @throws EnvironmentFailedException if a commit failed half-way, so that point never comes
     */
    public <T> T runExclusive(Supplier<T> action) {
        commitGate.lock();
        try {
            if (!watermark.awaitVisible(clock, () -> failure != null)) {
                checkUsable();
            }
            return action.get();
        } finally {
            commitGate.unlock();
        }
    }

    /**
     * As {@link #runExclusive}, for a caller that holds the trees' flushes paused: a large commit
     * being applied waits for the flushers between batches, so waiting for it with flushes paused
     * would never end. Gives up (returns false, {@code action} not run) when, after
     * {@code patienceNanos}, the gate is still taken or the commits logged so far are not all
     * applied and a large commit is being applied (or the thread is interrupted); the caller then
     * resumes the flushes, waits with {@link #awaitApplied} and tries again.
     *
     * @throws EnvironmentFailedException if a commit failed half-way
     */
    public boolean tryRunExclusive(Runnable action, long patienceNanos) {
        try {
            // Bounded too: whoever holds the gate (an index creation at its own quiet point) may be
            // waiting for the very commit that waits for the paused flushers.
            while (!commitGate.tryLock(patienceNanos, TimeUnit.NANOSECONDS)) {
                if (largeApplies.get() > 0) {
                    return false;
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
        try {
            // Only a large commit's apply waits for the flushers: other commits in flight are
            // waited out however long they take, as runExclusive does.
            while (!watermark.awaitVisible(clock, () -> failure != null, patienceNanos)) {
                checkUsable();
                if (largeApplies.get() > 0 || Thread.currentThread().isInterrupted()) {
                    return false;
                }
            }
            action.run();
            return true;
        } finally {
            commitGate.unlock();
        }
    }

    /** Waits, holding nothing, until every commit logged before the call is applied. */
    public void awaitApplied() {
        long logged;
        commitGate.lock();
        try {
            logged = clock;
        } finally {
            commitGate.unlock();
        }
        if (!watermark.awaitVisible(logged, () -> failure != null)) {
            checkUsable();
        }
    }

    /**
     * Starts a snapshot at the visibility watermark: it sees every commit that has returned to its
     * caller (a commit returns once visible) and none still being applied; pair with
     * {@link #endSnapshot}. It does not wait for commits in flight: with 16 writers, waiting for
     * every commit logged so far made each transaction's start wait out the commits queued before
     * it. A transaction that then conflicts with one of those learns so only once it is visible
     * (see {@link #conflicts}), so that its retry does not conflict again.
     *
     * @throws EnvironmentFailedException if a commit failed half-way, so the watermark is stuck
     */
    public long beginSnapshot() {
        commitGate.lock();
        try {
            checkUsable();
            // Registered under the gate, so that the conflict table is not pruned past it
            // meanwhile. The watermark moves outside the gate: a horizon read between this read of
            // it and the registration could pass the snapshot, so a floor is published first and
            // the snapshot read after it (see oldestSnapshot()).
            snapshotBeginning = watermark.visible();
            try {
                long ts = watermark.visible();
                activeSnapshots.merge(ts, 1, Integer::sum);
                oldestSnapshot = activeSnapshots.firstKey();
                return ts;
            } finally {
                // Even after an error (an OutOfMemoryError in the map): a floor left behind would
                // hold the horizon, and so every version and the conflict table, back for good.
                snapshotBeginning = Long.MAX_VALUE;
            }
        } finally {
            commitGate.unlock();
        }
    }

    /** Ends a snapshot started by {@link #beginSnapshot}. */
    public void endSnapshot(long ts) {
        commitGate.lock();
        try {
            activeSnapshots.computeIfPresent(ts, (k, n) -> n == 1 ? null : n - 1);
            oldestSnapshot = activeSnapshots.isEmpty() ? Long.MAX_VALUE : activeSnapshots.firstKey();
            conflicts.prune(oldestSnapshot());
        } finally {
            commitGate.unlock();
        }
    }

    /**
     * The oldest snapshot any reader may use: the oldest live snapshot, or the watermark when that
     * is older (a snapshot begun now would take it). Versions older than it are invisible to all.
     * Lock-free.
     *
     * <p>The watermark is read first: a snapshot whose registration this read does not see (its
     * {@link #snapshotBeginning} floor not yet published) reads its timestamp from the watermark
     * afterwards, at or above the value read here; one whose floor it sees is at or above that
     * floor; and one whose floor is gone again is in {@link #oldestSnapshot}, written before.
     */
    @Override
    public long oldestSnapshot() {
        // In this order (see above): the watermark, then the floor, then the registered snapshots.
        long visible = watermark.visible();
        long beginning = snapshotBeginning;
        long oldest = oldestSnapshot;
        return Math.min(Math.min(visible, beginning), oldest);
    }

    /**
     * Whether a commit after {@code snapshotTs} wrote {@code key} of index {@code indexId}. If so,
     * returns only once that commit is visible, so that a transaction retried at once takes a
     * snapshot that includes it.
     */
    public boolean conflicts(int indexId, byte[] key, long snapshotTs) {
        if (!conflicts.anyCommitAfter(snapshotTs)) {
            return false;
        }
        long last = conflicts.lastCommit(ConflictTable.hash(indexId, key), indexId, key, snapshotTs, 0);
        if (last <= snapshotTs) {
            return false;
        }
        awaitVisibleForRetry(last);
        return true;
    }

    /** Waits until commit {@code ts} is visible, unless a failure means it never will be. */
    private void awaitVisibleForRetry(long ts) {
        watermark.awaitVisible(ts, () -> failure != null);
    }

    /**
     * Commits {@code ops} for a transaction whose snapshot is {@code snapshotTs} ({@code -1}: no
     * snapshot, as for a single write without a transaction). Returns once the commit is applied
     * and visible, so the caller reads its own writes.
     *
     * @return the log position the caller syncs to for durability
     * @throws WriteConflictException if a key was committed by another transaction after the snapshot
     * @throws EnvironmentFailedException if an earlier commit was logged but not wholly applied
     * @throws IllegalArgumentException if the commit's log record would exceed the log's record
     *     limit (checked first: nothing is recorded)
     */
    public long commit(long snapshotTs, List<WriteOp> ops) {
        return commit(snapshotTs, ops, System.nanoTime(), () -> { });
    }

    /**
     * As {@link #commit(long, List)}, running {@code whenVisible} once the commit is visible and
     * before the caller may be held back for the flushers: a transaction ends its snapshot there, so
     * that the time it is held back does not hold back the horizon (which keeps row versions and
     * the keys of recent commits, {@link ConflictTable}). Not run if the commit does not happen.
     * {@code startedNanos} is when the transaction began ({@link System#nanoTime}): a commit that
     * took longer than usual from there is held back that much less.
     */
    public long commit(long snapshotTs, List<WriteOp> ops, long startedNanos, Runnable whenVisible) {
        // Encoded before the gate, which only stamps the timestamp in.
        ByteBuffer record = CommitRecord.encodeUnstamped(ops);
        long[] hashes = new long[ops.size()];
        for (int i = 0; i < hashes.length; i++) {
            WriteOp op = ops.get(i);
            hashes[i] = ConflictTable.hash(op.indexId(), op.key());
        }
        // Parsed before the gate: nothing may throw there once the commit is logged.
        List<ConflictTable.RangeCommit> ranges = ConflictTable.rangesOf(ops);
        List<List<WriteOp>> byTree = GroupedWrites.byTree(ops, WriteOp::tree);
        long[] treeTurns = new long[byTree.size()];
        long ts;
        long position;
        long conflicting = 0;
        int conflictIndex = 0;
        // Large commits after the snapshot are looked up before the gate: a lookup reads a block.
        long largeChecked = 0;
        if (snapshotTs >= 0) {
            for (Map.Entry<Long, CommitRun> large : conflicts.largeAfter(snapshotTs)) {
                for (int i = 0; i < hashes.length && conflicting == 0; i++) {
                    if (!ops.get(i).blind() && large.getValue().contains(ops.get(i).indexId(), ops.get(i).key())) {
                        conflicting = large.getKey();
                        conflictIndex = ops.get(i).indexId();
                    }
                }
                largeChecked = large.getKey();
            }
        }
        conflicts.prepareToRecord(hashes);
        commitGate.lock();
        try {
            checkUsable();
            if (snapshotTs >= 0) {
                for (int i = 0; i < hashes.length && conflicting == 0; i++) {
                    if (ops.get(i).blind()) {
                        continue; // an update reads nothing: it conflicts with no commit (docs/design-messages.md)
                    }
                    long last = conflicts.lastCommit(hashes[i], ops.get(i).indexId(), ops.get(i).key(), snapshotTs,
                            largeChecked);
                    if (last > snapshotTs) {
                        conflicting = last;
                        conflictIndex = ops.get(i).indexId();
                    }
                }
            }
            if (conflicting == 0) {
                ts = clock + 1;
                position = log.appendCommit(ts, record);
                clock = ts;
                // Snapshots start at the watermark, so one begun before this commit is visible
                // predates it: the keys are recorded whether or not a snapshot is live now, and
                // what no snapshot can predate any longer is dropped first.
                conflicts.prune(oldestSnapshot());
                conflicts.record(ts, hashes);
                if (!ranges.isEmpty()) {
                    conflicts.recordRanges(ts, ranges);
                }
                for (int t = 0; t < treeTurns.length; t++) {
                    treeTurns[t] = turns.take(byTree.get(t).get(0).tree());
                }
            } else {
                ts = -1;
                position = -1;
            }
        } finally {
            commitGate.unlock();
        }
        if (conflicting != 0) {
            // Thrown once the conflicting commit is visible, out of the gate: a retry's snapshot
            // then includes it.
            awaitVisibleForRetry(conflicting);
            throw new WriteConflictException("write conflict on a key of index id " + conflictIndex
                    + ": another transaction committed it after this transaction's snapshot");
        }
        List<BeTree> trees = GroupedWrites.trees(byTree, WriteOp::tree);
        apply(trees, treeTurns, false, ts, (t, tree) -> tree.writeAll(byTree.get(t), ts));
        if (!watermark.awaitVisible(ts, () -> failure != null)) {
            checkUsable();
        }
        whenVisible.run();
        // Visible, and out of every tree's turn: waiting for the flushers now delays only this
        // writer, not the commits behind it.
        holdBack(trees, System.nanoTime() - startedNanos);
        return position;
    }

    /**
     * Commits a transaction whose writes were spilled, {@code run} holding the latest write of each
     * key. The writes are logged in parts before the commit gate; in the gate the commit checks its
     * keys against commits made since {@code snapshotTs} (a pass over the run, skipped when there
     * were none), logs a record naming the parts and hands {@code run} to the conflict table, which
     * closes it once no snapshot predates the commit. It is then applied in batches, each tree in
     * its turn, and returns once visible. {@code run} is closed if the commit does not happen.
     *
     * @param trees the tree of each index id in the run
     * @return the log position the caller syncs to for durability
     * @throws WriteConflictException if a key was committed by another transaction after the snapshot
     * @throws EnvironmentFailedException if an earlier commit was logged but not wholly applied
     */
    public long commitLarge(long snapshotTs, CommitRun run, IntFunction<BeTree> trees) {
        boolean handedOver = false;
        long retainedFrom = retention.begin(log::endLsn);
        try {
            long[] parts = LargeCommitStream.logParts(log, run);
            List<Integer> ids = run.indexIds();
            List<BeTree> touched = new ArrayList<>(ids.size());
            for (int id : ids) {
                touched.add(trees.apply(id));
            }
            long[] treeTurns = new long[touched.size()];
            long ts = -1;
            long position = -1;
            long conflicting = 0;
            // Other large commits are compared with before the gate; only those that commit
            // meanwhile are left for the gate.
            long largeChecked = snapshotTs;
            if (snapshotTs >= 0) {
                for (Map.Entry<Long, CommitRun> large : conflicts.largeAfter(snapshotTs)) {
                    if (conflicting == 0 && run.sharesAKeyWith(large.getValue())) {
                        conflicting = large.getKey();
                    }
                    largeChecked = large.getKey();
                }
            }
            commitGate.lock();
            try {
                checkUsable();
                if (conflicting == 0 && snapshotTs >= 0) {
                    conflicting = firstConflict(run, snapshotTs, largeChecked);
                }
                if (conflicting == 0) {
                    ts = clock + 1;
                    position = log.appendCommitParts(new CommitPartsRecord(ts, run.count(), parts));
                    clock = ts;
                    conflicts.prune(oldestSnapshot());
                    conflicts.recordLarge(ts, run);
                    handedOver = true;
                    for (int t = 0; t < treeTurns.length; t++) {
                        treeTurns[t] = turns.take(touched.get(t));
                    }
                }
            } finally {
                commitGate.unlock();
            }
            if (conflicting != 0) {
                awaitVisibleForRetry(conflicting);
                throw new WriteConflictException("write conflict: another transaction committed a key of this"
                        + " transaction after its snapshot");
            }
            long commitTs = ts;
            largeApplies.incrementAndGet();
            try {
                apply(touched, treeTurns, true, commitTs, (t, tree) -> writerWaitNanos.addAndGet(
                        LargeCommitStream.apply(run, ids.get(t), tree, commitTs)));
            } finally {
                largeApplies.decrementAndGet();
            }
            if (!watermark.awaitVisible(commitTs, () -> failure != null)) {
                checkUsable();
            }
            return position;
        } finally {
            retention.end(retainedFrom);
            if (!handedOver) {
                run.close();
            }
        }
    }

    /**
     * A commit after {@code snapshotTs} that wrote a key of {@code run}, or 0; large commits at or
     * before {@code largeChecked} were compared with already. In the gate: a pass over the run
     * when a small commit came after the snapshot, a pass over both runs per new large commit.
     */
    private long firstConflict(CommitRun run, long snapshotTs, long largeChecked) {
        if (conflicts.newestSmallCommit() > snapshotTs) {
            Iterator<Op> it = run.iterator();
            while (it.hasNext()) {
                Op op = it.next();
                if (op.type() == CommitRecord.UPDATE) {
                    continue; // blind
                }
                long last = Math.max(conflicts.lastSmallCommit(ConflictTable.hash(op.indexId(), op.key())),
                        conflicts.lastRangeCovering(op.indexId(), op.key(), snapshotTs));
                if (last > snapshotTs) {
                    return last;
                }
            }
        }
        for (Map.Entry<Long, CommitRun> large : conflicts.largeAfter(largeChecked)) {
            if (run.sharesAKeyWith(large.getValue())) {
                return large.getKey();
            }
        }
        return 0;
    }

    /**
     * Where the log must keep its records from, for a checkpoint at {@code checkpointLsn}: there, or
     * earlier where a large commit in flight logged its first part.
     */
    public long logNeededFrom(long checkpointLsn) {
        return retention.neededFrom(checkpointLsn);
    }

    /** Releases what the conflict table holds on disk (the environment is closing). */
    public void close() {
        commitGate.lock();
        try {
            conflicts.close();
        } finally {
            commitGate.unlock();
        }
    }

    /**
     * Applies a logged commit's writes, each tree in its turn, and marks commit {@code ts}
     * applied ({@link Watermark#applied}). Every turn is ended, even after a failure, so later
     * commits do not wait forever (they then fail on the unusable tree).
     *
     * <p>The mark is made in the last tree's turn, by whichever thread runs it: the turns before
     * it have run by then (this thread ran them in order), and a thread running turns of several
     * commits marks them in commit order. When each commit marked itself once its thread was
     * woken, owners woken out of order waited again for the watermark: in a 16-writer time
     * series, a park on the watermark for every other commit.
     */
    private void apply(List<BeTree> trees, long[] treeTurns, boolean large, long ts, TreeWriter writer) {
        if (treeTurns.length == 0) {
            watermark.applied(ts);
            return;
        }
        Throwable failed = null;
        for (int t = 0; t < treeTurns.length; t++) {
            BeTree tree = trees.get(t);
            int treeNumber = t;
            boolean last = t == treeTurns.length - 1;
            // After a failure the later turns still run, with nothing to write, so that the
            // commits behind this one are not left waiting; the commit is not marked applied.
            Runnable writes = failed != null ? () -> { } : () -> {
                writer.write(treeNumber, tree);
                if (last) {
                    watermark.applied(ts);
                }
            };
            try {
                turns.run(tree, treeTurns[t], writes, large);
            } catch (RuntimeException | Error e) {
                failed = e;
            }
        }
        if (failed != null) {
            // Logged but not fully applied: only recovery can make the trees whole again.
            failure = failed;
            failures.failed(failed);
            if (failed instanceof Error err) {
                throw err;
            }
            throw (RuntimeException) failed;
        }
    }

    /** Writes a commit's share of one tree, in the tree's turn. */
    @FunctionalInterface
    interface TreeWriter {
        void write(int treeNumber, BeTree tree);
    }

    /** Back-pressure: delays the writer of {@code trees} while their flushers catch up. */
    private void holdBack(List<BeTree> trees, long commitNanos) {
        writerWaitNanos.addAndGet(BeTree.holdWritersBack(trees, commitNanos));
    }

    /**
     * Nanoseconds committed writers have been held back since open because the flushers fell
     * behind (back-pressure).
     */
    public long writerWaitNanos() {
        return writerWaitNanos.get();
    }

    /** Makes everything up to {@code position} durable. */
    public void syncTo(long position) {
        log.syncTo(position);
    }

    /** Applies a commit found in the log during recovery (no logging, no conflict checks). */
    public void recover(long ts, List<WriteOp> ops) {
        List<List<WriteOp>> byTree = GroupedWrites.byTree(ops, WriteOp::tree);
        long started = System.nanoTime();
        commitGate.lock();
        try {
            for (List<WriteOp> group : byTree) {
                group.get(0).tree().writeAll(group, ts);
            }
            clock = Math.max(clock, ts);
            watermark.recovered(clock);
        } finally {
            commitGate.unlock();
        }
        // Timed as a commit is, so that replay learns a usual commit and is paced as writers are.
        holdBack(GroupedWrites.trees(byTree, WriteOp::tree), System.nanoTime() - started);
    }

    private void checkUsable() {
        Throwable f = failure;
        if (f != null) {
            throw new EnvironmentFailedException("a commit failed half-way (" + f
                    + "); reopen the environment to recover", f);
        }
    }
}
