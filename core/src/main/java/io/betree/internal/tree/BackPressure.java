package io.betree.internal.tree;

import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Holds writers back when the flushers fall behind, smoothly before it stops them: while a tree's
 * root holds more than {@link #SLOW_FROM} node sizes, each commit waits a delay of up to
 * {@link #MAX_DELAY_NANOS}, longer the fuller the root; past {@link #STOP_AT} node sizes a writer
 * waits until a flusher has brought the root back below. A writer that flushed by itself instead
 * would stall its own batch for a whole flush step (hundreds of milliseconds at the leaves), which
 * is the stall a write-optimized engine exists to avoid; a short delay on every batch spreads the
 * same slowdown evenly.
 *
 * <p>The delay must be able to bring writers below what the flushers drain before the root reaches
 * the stop, or writers go from slowed to stopped for a whole step. With 8 ms at most, a lone
 * delete-FIFO writer still committed faster than the flushers drained and stopped for 200-300 ms
 * at a time; 40 ms leaves the balance inside the band for one writer and for 16. Each writer waits
 * its own delay. When a tree's writers queued for shared slots instead, 16 of them waited 16 slots
 * each as soon as the root passed the mark (p99 160 ms in a 16-writer time series against 98 ms),
 * and a slot's end stayed booked when its writer left early, so that a lone writer later waited
 * out about a hundred of them at once (455 ms for one slot of a few milliseconds). With many more
 * writers per tree than 16 (not measured), their own delays may no longer hold them below the
 * flushers; they then reach the stop, which still bounds memory.
 *
 * <p>Two refinements. A commit that took longer than usual ({@link UsualCommitTime}) is delayed by
 * that much less: its writer was already kept from writing. And a node cache that has gone a
 * quarter of the way into its headroom above the budget slows writers too, up to the same longest
 * delay at the hard limit, past which they stop inside the tree until the evictor has made room
 * ({@link NodeStore#awaitRoom}); writers used to run at full speed into that stop (waits of 10 ms
 * at a time, 100-200 ms in all for a batch, while a checkpoint's writes slowed the evictors).
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
    /**
     * Share of the node cache's headroom above its budget ({@link BeTree#cacheHeadroomUsed}) from
     * which writers are slowed, up to {@link #MAX_DELAY_NANOS} at the hard limit, where they stop
     * until the evictor has made room.
     */
    static final double MEMORY_SLOW_FROM = 0.25;
    /** The longest delay of a writer whose roots are just below {@link #STOP_AT}. */
    static final long MAX_DELAY_NANOS = TimeUnit.MILLISECONDS.toNanos(40);
    /** How often a stopped writer looks again, in case a shrink came before it waited. */
    private static final long STOPPED_RECHECK_NANOS = TimeUnit.MILLISECONDS.toNanos(5);

    static final BackPressure PROCESS = new BackPressure();

    private final ReentrantLock lock = new ReentrantLock();
    private final Condition shrunk = lock.newCondition();

    private BackPressure() {
    }

    /**
     * Delays the calling writer as the fullest root among {@code trees} requires, less the time
     * by which its commit, which took {@code commitNanos} (0: not known), overran the usual commit
     * to that tree ({@link UsualCommitTime}); returns the nanoseconds it waited. The caller holds
     * no lock of any tree.
     */
    long holdBack(List<BeTree> trees, long commitNanos) {
        BeTree tree = fullestTree(trees);
        if (tree == null) {
            return 0;
        }
        long overrun = commitNanos > 0 ? tree.usualCommitTime.overrun(commitNanos) : 0;
        double fullest = tree.rootFullness();
        double memory = tree.cacheHeadroomUsed();
        if (fullest <= SLOW_FROM && memory <= MEMORY_SLOW_FROM) {
            return 0;
        }
        long start = System.nanoTime();
        if (fullest < STOP_AT) {
            requestFlushes(trees);
            long delay = Math.max(rootDelay(fullest), memoryDelay(memory)) - overrun;
            if (delay <= 0) {
                return 0;
            }
            long end = start + delay;
            // The delay ends early if the root shrinks back below the slow-down mark meanwhile
            // (and the cache is back out of the part of its headroom that slows writers).
            for (long left = end - System.nanoTime(); left > 0
                    && (tree.rootFullness() > SLOW_FROM || tree.cacheHeadroomUsed() > MEMORY_SLOW_FROM);
                    left = end - System.nanoTime()) {
                awaitShrink(left);
            }
        } else {
            while (fullest >= STOP_AT) {
                requestFlushes(trees);
                awaitShrink(STOPPED_RECHECK_NANOS);
                fullest = fullest(trees);
            }
        }
        return System.nanoTime() - start;
    }

    /** The delay a root of {@code fullness} node sizes asks for, below the stop. */
    private static long rootDelay(double fullness) {
        return fullness <= SLOW_FROM ? 0 : (long) (MAX_DELAY_NANOS * (fullness - SLOW_FROM) / (STOP_AT - SLOW_FROM));
    }

    /** The delay a cache that has used {@code headroomUsed} of its headroom asks for. */
    private static long memoryDelay(double headroomUsed) {
        return headroomUsed <= MEMORY_SLOW_FROM ? 0
                : (long) (MAX_DELAY_NANOS * Math.min(1, (headroomUsed - MEMORY_SLOW_FROM) / (1 - MEMORY_SLOW_FROM)));
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
        BeTree t = fullestTree(trees);
        return t == null ? 0 : t.rootFullness();
    }

    private static BeTree fullestTree(List<BeTree> trees) {
        BeTree fullest = null;
        for (BeTree t : trees) {
            if (fullest == null || t.rootFullness() > fullest.rootFullness()) {
                fullest = t;
            }
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

    /**
     * Waits up to {@code nanos} for a shrink. An interrupt does not end the hold (the commit is
     * already visible, so nothing is undone); it is passed on once the wait is over, rather than
     * set again at once, which made every later wait of a stopped writer return at once and spin.
     */
    private void awaitShrink(long nanos) {
        boolean interrupted = Thread.interrupted();
        lock.lock();
        try {
            shrunk.awaitNanos(nanos);
        } catch (InterruptedException e) {
            interrupted = true;
        } finally {
            lock.unlock();
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }
}
