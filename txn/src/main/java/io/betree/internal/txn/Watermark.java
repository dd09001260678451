package io.betree.internal.txn;

import java.util.TreeSet;
import java.util.concurrent.ConcurrentSkipListSet;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BooleanSupplier;

/**
 * The ordered visibility watermark: the newest commit timestamp at or below which every commit is
 * fully applied to the trees. Commits are applied out of the commit gate and so may finish out of
 * order; the watermark only moves past a timestamp once every earlier one has finished, so a
 * snapshot taken at the watermark sees each commit entirely or not at all, in every index.
 *
 * <p>A move wakes only the threads waiting for a timestamp it passed, not every waiter: with 16
 * writers, waking all of them at every move cost each commit some fifteen needless wake-ups on a
 * two-core machine, as the apply turns once did ({@link ApplyTurns}).
 *
 * <p>Thread-safe; {@link #visible()} is a volatile read.
 */
final class Watermark {
    /** How often a waiter looks again on its own: a failure elsewhere does not wake it. */
    private static final long RECHECK_NANOS = TimeUnit.MILLISECONDS.toNanos(10);

    private final ReentrantLock lock = new ReentrantLock();
    /** Applied timestamps above the watermark, waiting for an earlier one. Guarded by lock. */
    private final TreeSet<Long> appliedAhead = new TreeSet<>();
    /** Threads waiting for the watermark, by the timestamp they wait for. */
    private final ConcurrentSkipListSet<Waiter> waiters = new ConcurrentSkipListSet<>();
    private final AtomicLong waiterIds = new AtomicLong();
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
        long v;
        lock.lock();
        try {
            appliedAhead.add(ts);
            v = visible;
            while (!appliedAhead.isEmpty() && appliedAhead.first() == v + 1) {
                v = appliedAhead.pollFirst();
            }
            if (v == visible) {
                return;
            }
            visible = v;
        } finally {
            lock.unlock();
        }
        wakeUpTo(v);
    }

    /** Sets the watermark during recovery, where commits are applied one by one in order. */
    void recovered(long ts) {
        long v;
        lock.lock();
        try {
            v = Math.max(visible, ts);
            visible = v;
        } finally {
            lock.unlock();
        }
        wakeUpTo(v);
    }

    private void wakeUpTo(long v) {
        for (Waiter w : waiters) {
            if (w.ts > v) {
                break;
            }
            LockSupport.unpark(w.thread);
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
        // Registered before visible is read again: a move that misses this waiter has already
        // made visible pass ts, so the loop below does not park.
        Waiter me = new Waiter(ts, waiterIds.incrementAndGet(), Thread.currentThread());
        waiters.add(me);
        try {
            while (visible < ts) {
                long waited = System.nanoTime() - start;
                if (abandoned.getAsBoolean() || waited >= patienceNanos) {
                    return false;
                }
                if (Thread.interrupted()) {
                    Thread.currentThread().interrupt();
                    return visible >= ts;
                }
                LockSupport.parkNanos(this, Math.min(RECHECK_NANOS, patienceNanos - waited));
            }
            return true;
        } finally {
            waiters.remove(me);
        }
    }

    /** A thread waiting for timestamp {@code ts}; {@code id} tells apart waiters of one timestamp. */
    private record Waiter(long ts, long id, Thread thread) implements Comparable<Waiter> {
        @Override
        public int compareTo(Waiter o) {
            int c = Long.compare(ts, o.ts);
            return c != 0 ? c : Long.compare(id, o.id);
        }
    }
}
