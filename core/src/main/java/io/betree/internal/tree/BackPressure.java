package io.betree.internal.tree;

import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Holds writers back when the flushers fall behind, smoothly before it stops them: a committed
 * writer whose trees' roots hold more than {@link #SLOW_FROM} node sizes waits a little, more the
 * fuller the roots are, up to {@link #MAX_DELAY_NANOS}; past {@link #STOP_AT} node sizes it waits
 * until a flusher has brought them back below. A writer that flushed by itself instead would stall
 * its own batch for a whole flush step (hundreds of milliseconds at the leaves), which is the
 * stall a write-optimized engine exists to avoid; a short delay on every batch spreads the same
 * slowdown evenly.
 *
 * <p>Writers wait holding no lock, after their commit is visible, so nobody waits for them. A
 * flusher that shrinks a root wakes the waiters ({@link #rootShrunk}). Thread-safe; one instance
 * serves every tree of the process.
 */
final class BackPressure {
    /** Root size, in node sizes, from which writers are slowed. */
    static final double SLOW_FROM = 2.0;
    /** Root size, in node sizes, from which writers wait until the root shrinks. */
    static final double STOP_AT = 4.0;
    /** The longest delay of a writer whose roots are just below {@link #STOP_AT}. */
    static final long MAX_DELAY_NANOS = TimeUnit.MILLISECONDS.toNanos(8);
    /** How often a stopped writer looks again, in case a shrink came before it waited. */
    private static final long STOPPED_RECHECK_NANOS = TimeUnit.MILLISECONDS.toNanos(5);

    static final BackPressure PROCESS = new BackPressure();

    private final ReentrantLock lock = new ReentrantLock();
    private final Condition shrunk = lock.newCondition();

    private BackPressure() {
    }

    /**
     * Delays the calling writer as the fullest root among {@code trees} requires; returns the
     * nanoseconds it waited. The caller holds no lock of any tree.
     */
    long holdBack(List<BeTree> trees) {
        double fullest = fullest(trees);
        if (fullest <= SLOW_FROM) {
            return 0;
        }
        long start = System.nanoTime();
        if (fullest < STOP_AT) {
            requestFlushes(trees);
            awaitShrink((long) (MAX_DELAY_NANOS * (fullest - SLOW_FROM) / (STOP_AT - SLOW_FROM)));
        } else {
            while (fullest >= STOP_AT) {
                requestFlushes(trees);
                awaitShrink(STOPPED_RECHECK_NANOS);
                fullest = fullest(trees);
            }
        }
        return System.nanoTime() - start;
    }

    /** Wakes writers held back: a flusher has made a root smaller. */
    void rootShrunk() {
        lock.lock();
        try {
            shrunk.signalAll();
        } finally {
            lock.unlock();
        }
    }

    private static double fullest(List<BeTree> trees) {
        double fullest = 0;
        for (BeTree t : trees) {
            fullest = Math.max(fullest, t.rootFullness());
        }
        return fullest;
    }

    private static void requestFlushes(List<BeTree> trees) {
        for (BeTree t : trees) {
            if (t.rootFullness() > 1) {
                t.flushInBackground();
            }
        }
    }

    private void awaitShrink(long nanos) {
        lock.lock();
        try {
            shrunk.awaitNanos(nanos);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            lock.unlock();
        }
    }
}
