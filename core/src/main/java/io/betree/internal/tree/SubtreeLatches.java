package io.betree.internal.tree;

import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantReadWriteLock;

/**
 * One latch per subtree under a tree's root, so that flush steps in different subtrees run at once
 * and a read of one subtree does not wait for a flush step in another. A subtree is named by the
 * block number of the root's child at its top; its latch is one of {@value #STRIPES} read-write
 * locks chosen by that number (two subtrees that share one merely take turns).
 *
 * <p>A flush step holds its subtree's latch exclusively while it moves a root buffer into the
 * child and on down; readers hold it shared while they read below the root. Both take it while
 * holding the tree's structure lock shared, which keeps the root's child list (and so the meaning
 * of each subtree) fixed, and before the root latch: structure, then subtree, then root latch.
 * Whatever changes the root's child list holds the structure lock exclusively and needs no
 * subtree latch.
 *
 * <p>Flush steps also <em>claim</em> a subtree's stripe before they latch it ({@link #tryClaim}),
 * so that a second flusher picks another subtree rather than wait for the first. Thread-safe.
 */
final class SubtreeLatches {
    /** Latches per tree: at least the fanout, so that a root's children rarely share one. */
    static final int STRIPES = 64;

    private final ReentrantReadWriteLock[] latches = new ReentrantReadWriteLock[STRIPES];
    /** Bit s is set while a flush step has claimed stripe s. */
    private final AtomicLong claimed = new AtomicLong();

    SubtreeLatches() {
        for (int s = 0; s < STRIPES; s++) {
            latches[s] = new ReentrantReadWriteLock();
        }
    }

    private static int stripe(long child) {
        long h = child * 0x9E3779B97F4A7C15L;
        return (int) (h >>> 58);
    }

    /** Waits until no flush step works in the subtree under {@code child}, then holds it off. */
    void lockShared(long child) {
        latches[stripe(child)].readLock().lock();
    }

    /** As {@link #lockShared}, without waiting; returns whether it was taken. */
    boolean tryLockShared(long child) {
        return latches[stripe(child)].readLock().tryLock();
    }

    void unlockShared(long child) {
        latches[stripe(child)].readLock().unlock();
    }

    /** Waits until nobody reads or flushes in the subtree under {@code child}, then excludes them. */
    void lockExclusive(long child) {
        latches[stripe(child)].writeLock().lock();
    }

    void unlockExclusive(long child) {
        latches[stripe(child)].writeLock().unlock();
    }

    /** Claims the stripe of {@code child} for a flush step unless another step has; see {@link #release}. */
    boolean tryClaim(long child) {
        long bit = 1L << stripe(child);
        while (true) {
            long c = claimed.get();
            if ((c & bit) != 0) {
                return false;
            }
            if (claimed.compareAndSet(c, c | bit)) {
                return true;
            }
        }
    }

    /** Whether a flush step has claimed the stripe of {@code child}. */
    boolean isClaimed(long child) {
        return (claimed.get() & (1L << stripe(child))) != 0;
    }

    /** Whether any flush step holds a claim. */
    boolean anyClaimed() {
        return claimed.get() != 0;
    }

    /** Ends a claim of {@link #tryClaim}. */
    void release(long child) {
        long bit = 1L << stripe(child);
        claimed.getAndUpdate(c -> c & ~bit);
    }
}
