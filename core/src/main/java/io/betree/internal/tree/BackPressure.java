package io.betree.internal.tree;

import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.LongUnaryOperator;

/**
 * Holds writers back when the flushers or the evictor fall behind, smoothly before it stops them.
 * Each commit waits a delay of two parts: the tree's learned pace ({@link WritePace}) times the
 * usual commit, which settles at what keeps the writers level with the flushers and evictor, the
 * same for every batch; and a part in proportion to how far the root is past {@link #SLOW_FROM}
 * node sizes, or the node cache past {@link #MEMORY_SLOW_FROM} of its headroom above the budget,
 * up to {@link #MAX_ROOT_DELAY_NANOS} for a lone writer and times the writers held at once (below),
 * {@link #MAX_DELAY_NANOS} in all, for what the pace has not caught up with yet. Past
 * {@link #STOP_AT} node sizes a writer waits until a flusher has brought the root back below, and
 * past the cache's budget inside the tree until the evictor has made room
 * ({@link NodeStore#awaitRoom}). A writer that flushed by itself instead would stall its own batch
 * for a whole flush step (hundreds of milliseconds at the leaves), which is the stall a
 * write-optimized engine exists to avoid.
 *
 * <p>Until 2026-11-27 the whole delay was in proportion to the root's fullness and the cache's
 * headroom, up to 40 ms: both rise and fall in steps (a flush step takes a child's whole buffer out
 * of the root, an eviction task frees megabytes at once), so the delays did too, and in a
 * small-cache iiBench (64 MiB), where the cache's headroom, not the roots, held writers back, 7% of
 * the batches waited 10-40 ms and the p99 batch took 34 ms. With the pace and the proportional part
 * at 10 ms at most (then for every writer), 239 batches waited 10 ms or more instead of 1,843, and
 * the p99 batch took 20.5-24.8 ms in four runs (docs/benchmarks.md). Without the proportional part
 * for the cache, writers ran into its budget and waited there (p99 40.5 ms).
 *
 * <p>The part in proportion to the root's fullness (or the cache's headroom) is multiplied by the
 * writers held back on the tree at the time, this one included: n writers each delayed the same
 * bring n times the commits that one would, so a delay that slows one writer enough barely slows
 * sixteen. With one writer's delay for each, 16 writers of a time series ran the root up to
 * {@link #STOP_AT} over and over while the pace caught up, and all 16 waited there together
 * (17 to 38 batches over 100 ms after the first half second of a run, three runs); with the delay
 * times the writers held, 0 to 2 in six runs.
 *
 * <p>Each writer waits its own delay. The writers held at once lengthen it, but it is no queue: the
 * count is read once as the writer arrives, the whole delay is at most {@link #MAX_DELAY_NANOS},
 * and a writer stops counting as soon as it leaves, so nothing stays booked. When a tree's writers
 * queued for shared slots instead, 16 of them waited 16 slots each as soon as the root passed the
 * mark (p99 160 ms in a 16-writer time series against 98 ms), and a slot's end stayed booked when
 * its writer left early, so that a lone writer later waited out about a hundred of them at once
 * (455 ms for one slot of a few milliseconds). A commit that took longer than usual
 * ({@link UsualCommitTime}) is delayed by that much less: its writer was already kept from
 * writing. The part of a delay past the pace ends early once the root is within its size and the
 * cache below the part of its headroom that slows writers (looked at every
 * {@link #CACHE_RECHECK_NANOS} when only the cache holds the writer).
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
     * which writers are slowed, by up to {@link #MAX_ROOT_DELAY_NANOS} at the hard limit (beside the
     * pace) times the writers held on the tree ({@link #MAX_DELAY_NANOS} in all), where they stop
     * until the evictor has made room.
     */
    static final double MEMORY_SLOW_FROM = 0.25;
    /** The longest delay of a writer, short of a stop. */
    static final long MAX_DELAY_NANOS = TimeUnit.MILLISECONDS.toNanos(40);
    /**
     * The part of the delay in proportion to the root's fullness past {@link #SLOW_FROM} (or the
     * cache's headroom past {@link #MEMORY_SLOW_FROM}), at most this just below {@link #STOP_AT}
     * (at the hard limit), times the writers held on the tree at once (up to
     * {@link #MAX_DELAY_NANOS} in all); the rest is the tree's learned pace ({@link WritePace}).
     */
    static final long MAX_ROOT_DELAY_NANOS = TimeUnit.MILLISECONDS.toNanos(10);
    /**
     * How often a stopped writer looks again on its own: a tree that closes, or fails outside a
     * flush step, wakes nobody.
     */
    private static final long STOPPED_RECHECK_NANOS = TimeUnit.MILLISECONDS.toNanos(5);
    /**
     * How often a writer past its pace, held only because the node cache is in the part of its
     * headroom that slows writers, looks at the cache again: the evictor wakes nobody.
     */
    private static final long CACHE_RECHECK_NANOS = TimeUnit.MILLISECONDS.toNanos(2);

    static final BackPressure PROCESS = new BackPressure();

    private final ReentrantLock lock = new ReentrantLock();
    /** Signalled when a root is within its size: slowed writers may end early. */
    private final Condition withinSize = lock.newCondition();
    /** Signalled when a root is below {@link #STOP_AT}: stopped writers may go on. */
    private final Condition belowStop = lock.newCondition();
    /** Slowed writers waiting out their delay ({@link #awaitSlowed}). */
    private final AtomicInteger slowed = new AtomicInteger();
    /** Writers stopped until a root is below {@link #STOP_AT} ({@link #await}). */
    private final AtomicInteger stopped = new AtomicInteger();

    private BackPressure() {
    }

    /**
     * Delays the calling writer as the fullest root among {@code trees} and the writers held on it
     * require, less the time by which its commit, which took {@code commitNanos} (0: not known),
     * overran the usual commit to that tree ({@link UsualCommitTime}); returns the nanoseconds it
     * waited. The caller holds no lock of any tree.
     */
    long holdBack(List<BeTree> trees, long commitNanos) {
        BeTree tree = fullestTree(trees);
        if (tree == null) {
            return 0;
        }
        int held = tree.heldWriters.incrementAndGet();
        try {
            return holdBack(trees, tree, held, commitNanos);
        } finally {
            tree.heldWriters.decrementAndGet();
        }
    }

    /**
     * {@link #holdBack(List, long)} for the fullest tree among {@code trees}, {@code tree}, on
     * which {@code held} writers are being held, this one included.
     */
    private long holdBack(List<BeTree> trees, BeTree tree, int held, long commitNanos) {
        long start = System.nanoTime();
        double memory = tree.cacheHeadroomUsed();
        long overrun = commitNanos > 0 ? tree.usualCommitTime.overrun(commitNanos) : 0;
        double pace = 0;
        // A pace counts only in multiples of a usual commit: with none known (commits whose
        // duration nobody measured, such as a large commit's batches) it is not learned either,
        // which would only slow the first measured commits afterwards.
        if (tree.usualCommitTime.usualNanos() > 0) {
            for (BeTree t : trees) {
                double behind = Math.max(rootPosition(t.rootFullness()), memoryPosition(memory));
                pace = Math.max(pace, t.writePace.update(Math.min(1, behind), start));
            }
        }
        long paced = (long) (pace * tree.usualCommitTime.usualNanos());
        double fullest = tree.rootFullness();
        if (fullest <= SLOW_FROM && memory <= MEMORY_SLOW_FROM && paced == 0) {
            return 0;
        }
        if (fullest < STOP_AT) {
            requestFlushes(trees);
            long proportional = held * proportionalDelay(Math.max(rootPosition(fullest), memoryPosition(memory)));
            long delay = Math.min(MAX_DELAY_NANOS, proportional + paced) - overrun;
            if (delay <= 0) {
                return 0;
            }
            long end = start + delay;
            long pacedEnd = start + Math.min(delay, paced);
            // Past the pace, the delay ends early if the flushers bring the root within its size
            // meanwhile (and the cache is back out of the part of its headroom that slows
            // writers). The pace is always waited: ended early whenever the cache dipped below,
            // delays went back to coming in lumps (in a delete-FIFO load the median batch waited
            // nothing, others tens of milliseconds).
            awaitSlowed(tree, pacedEnd, end);
        } else {
            while (fullest >= STOP_AT) {
                requestFlushes(trees);
                long recheckAt = System.nanoTime() + STOPPED_RECHECK_NANOS;
                await(belowStop, stopped, now -> now < recheckAt && fullest(trees) >= STOP_AT ? recheckAt : now);
                fullest = fullest(trees);
            }
        }
        return System.nanoTime() - start;
    }

    /** Where a root of {@code fullness} node sizes stands in the band from slowing to stopping writers. */
    private static double rootPosition(double fullness) {
        return (fullness - SLOW_FROM) / (STOP_AT - SLOW_FROM);
    }

    /** Where a cache that has used {@code headroomUsed} of its headroom stands in its band. */
    private static double memoryPosition(double headroomUsed) {
        return (headroomUsed - MEMORY_SLOW_FROM) / (1 - MEMORY_SLOW_FROM);
    }

    /** The delay in proportion to a band position: none below the band, at most {@link #MAX_ROOT_DELAY_NANOS}. */
    private static long proportionalDelay(double position) {
        return position <= 0 ? 0 : (long) (MAX_ROOT_DELAY_NANOS * Math.min(1, position));
    }

    /**
     * A flusher has made a root smaller, to {@code fullness} node sizes: wakes the writers it may
     * release. Slowed writers end their wait early only once a root is within its size, stopped
     * ones once it is below {@link #STOP_AT}; a root that shrank but stays past that wakes nobody.
     * Waking every held writer at every step, twice a step, made 16 writers of a time series park
     * 1.9 times per commit in back-pressure, about once more than their delays needed.
     */
    void rootShrunk(double fullness) {
        boolean wakeSlowed = fullness <= 1 && slowed.get() > 0;
        boolean wakeStopped = fullness < STOP_AT && stopped.get() > 0;
        if (!wakeSlowed && !wakeStopped) {
            return;
        }
        lock.lock();
        try {
            if (wakeSlowed) {
                withinSize.signalAll();
            }
            if (wakeStopped) {
                belowStop.signalAll();
            }
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
     * Waits out a slowed writer's delay: until {@code pacedEnd} whatever happens, then until
     * {@code end} unless the tree's root is within its size and its cache out of the part of its
     * headroom that slows writers ({@link System#nanoTime} times). One wait in the usual case,
     * where the root stays past its size: only a flush step that brings it within wakes the
     * writer, which then looks again at the pace's end. When every step woke every held writer
     * (twice a step), 16 writers of a time series parked 1.9 times per commit here.
     */
    private void awaitSlowed(BeTree tree, long pacedEnd, long end) {
        await(withinSize, slowed, now -> {
            if (now >= end) {
                return now;
            }
            boolean rootWithin = tree.rootFullness() <= 1;
            if (now < pacedEnd) {
                return rootWithin ? pacedEnd : end;
            } else if (!rootWithin) {
                return end;
            } else if (tree.cacheHeadroomUsed() > MEMORY_SLOW_FROM) {
                return Math.min(end, now + CACHE_RECHECK_NANOS);
            }
            return now; // within size and out of the cache's slow band: the delay ends
        });
    }

    /**
     * Waits on {@code condition} until {@code wakeAt}, given the time ({@link System#nanoTime}),
     * says a time not after it (the wait is over); between, until the time it says or a signal.
     * The writer counts itself in {@code waiters} ({@link #slowed} or {@link #stopped}) and takes
     * the lock before {@code wakeAt} first looks at the roots, so that a shrink that found no
     * waiter to wake came before the look and is seen by it. An interrupt does not end the hold
     * (the commit is already visible, so nothing is undone); it is passed on once the wait is
     * over, rather than set again at once, which made every later wait of a stopped writer return
     * at once and spin.
     */
    private void await(Condition condition, AtomicInteger waiters, LongUnaryOperator wakeAt) {
        boolean interrupted = Thread.interrupted();
        waiters.incrementAndGet();
        lock.lock();
        try {
            for (long now = System.nanoTime(), until = wakeAt.applyAsLong(now); until > now;
                    now = System.nanoTime(), until = wakeAt.applyAsLong(now)) {
                try {
                    condition.awaitNanos(until - now);
                } catch (InterruptedException e) {
                    interrupted = true;
                }
            }
        } finally {
            lock.unlock();
            waiters.decrementAndGet();
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }
}
