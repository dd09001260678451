package io.betree.internal.txn;

import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BooleanSupplier;

/**
 * The ordered visibility watermark: the newest commit timestamp at or below which every commit is
 * fully applied to the trees. Commits are applied out of the commit gate and so may finish out of
 * order; the watermark only moves past a timestamp once every earlier one has finished, so a
 * snapshot taken at the watermark sees each commit entirely or not at all, in every index.
 *
 * <p>Thread-safe; {@link #visible()} is a volatile read.
 */
final class Watermark {
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition moved = lock.newCondition();
    /** Applied timestamps above the watermark, waiting for an earlier one. Guarded by lock. */
    private final TreeSet<Long> appliedAhead = new TreeSet<>();
    private volatile long visible;

    Watermark(long visible) {
        this.visible = visible;
    }

    /** Every commit at or below this timestamp is fully applied. */
    long visible() {
        return visible;
    }

    /** Commit {@code ts} is fully applied; moves the watermark as far as the applied commits allow. */
    void applied(long ts) {
        lock.lock();
        try {
            appliedAhead.add(ts);
            long v = visible;
            while (!appliedAhead.isEmpty() && appliedAhead.first() == v + 1) {
                v = appliedAhead.pollFirst();
            }
            if (v != visible) {
                visible = v;
                moved.signalAll();
            }
        } finally {
            lock.unlock();
        }
    }

    /** Sets the watermark during recovery, where commits are applied one by one in order. */
    void recovered(long ts) {
        lock.lock();
        try {
            visible = Math.max(visible, ts);
            moved.signalAll();
        } finally {
            lock.unlock();
        }
    }

    /**
     * Waits until the watermark reaches {@code ts}, or until {@code abandoned} says it never will
     * (a commit before it failed half-way); returns whether it was reached.
     */
    boolean awaitVisible(long ts, BooleanSupplier abandoned) {
        return awaitVisible(ts, abandoned, Long.MAX_VALUE);
    }

    /** As {@link #awaitVisible(long, BooleanSupplier)}, giving up (false) after {@code patienceNanos}. */
    boolean awaitVisible(long ts, BooleanSupplier abandoned, long patienceNanos) {
        if (visible >= ts) {
            return true;
        }
        long start = System.nanoTime();
        lock.lock();
        try {
            while (visible < ts) {
                if (abandoned.getAsBoolean() || System.nanoTime() - start >= patienceNanos) {
                    return false;
                }
                // Timed: a failure elsewhere does not signal this condition.
                moved.await(10, TimeUnit.MILLISECONDS);
            }
            return true;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return visible >= ts;
        } finally {
            lock.unlock();
        }
    }
}
