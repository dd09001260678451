package io.betree.internal.txn;

import java.util.TreeMap;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.LongSupplier;

/**
 * The log positions large commits in flight still need: their parts are logged before their commit
 * record, perhaps before a checkpoint's position, and recovery reads them through the commit record.
 * A checkpoint deletes log segments only before the oldest of them. Thread-safe.
 */
final class LogRetention {
    private final ReentrantLock lock = new ReentrantLock();
    private final TreeMap<Long, Integer> inFlight = new TreeMap<>();

    /**
     * Registers a large commit about to log its parts; returns the position registered, which every
     * part follows. Registering and {@link #neededFrom} are ordered by one lock, so a checkpoint
     * either sees this commit or took its position before the commit's first part.
     */
    long begin(LongSupplier logEnd) {
        lock.lock();
        try {
            long from = logEnd.getAsLong();
            inFlight.merge(from, 1, Integer::sum);
            return from;
        } finally {
            lock.unlock();
        }
    }

    /** The commit registered at {@code from} logged its commit record or gave up. */
    void end(long from) {
        lock.lock();
        try {
            inFlight.computeIfPresent(from, (k, n) -> n == 1 ? null : n - 1);
        } finally {
            lock.unlock();
        }
    }

    /** The oldest position the log must keep, given that a checkpoint at {@code checkpointLsn} needs it from there. */
    long neededFrom(long checkpointLsn) {
        lock.lock();
        try {
            return inFlight.isEmpty() ? checkpointLsn : Math.min(checkpointLsn, inFlight.firstKey());
        } finally {
            lock.unlock();
        }
    }
}
