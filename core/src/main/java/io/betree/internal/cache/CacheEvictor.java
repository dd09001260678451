package io.betree.internal.cache;

import io.betree.internal.fault.BetreeIOException;
import io.betree.internal.memory.NodeMemory;
import io.netty.buffer.ByteBuf;
import java.io.IOException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * How a {@link NodeCache} makes room: its eviction tasks on the shared evictor threads
 * ({@link Evictors}), which drop clean entries, let them shed parts, and write dirty ones back, and
 * the wait of writers past the cache's limit for them. Holds the count of tasks, the flag that
 * stops them, the failure that stopped them (reported to writers), and the counts of evictions,
 * sheds and write-backs.
 *
 * <p>Not thread-safe: guarded by the cache's lock and its conditions, passed in. Callers hold the
 * lock, except that an eviction task takes it itself and that {@link #requestEviction},
 * {@link #evicting} and {@link #stopping} may be called without it; a write-back releases it while
 * its victim is serialized and written, and waiting writers while they wait.
 */
final class CacheEvictor {
    /** How long one eviction task runs before it lets other caches' tasks go first. */
    private static final long EVICTION_SLICE_NANOS = TimeUnit.MILLISECONDS.toNanos(50);
    /** The cache this evictor works for, as a member of {@link #budget}: only passed to the budget. */
    private final NodeCache cache;
    private final CacheBudget budget;
    private final NodeMemory memory;
    private final ReentrantLock lock;
    private final Condition roomMade;
    private final Condition claimEnded;
    private final CachedEntries entries;
    private final EntryImages images;
    private final CheckpointWriter checkpoint;
    /** Eviction tasks queued or running, at most {@link Evictors#TASKS_PER_CACHE}; other members of a shared budget read it. */
    private final AtomicInteger evictionTasks = new AtomicInteger();
    /** Set when the cache is released: tasks end, and writers stop waiting for room. */
    private volatile boolean stopping;
    /** What stopped the eviction tasks; writers waiting for room throw it. */
    private volatile RuntimeException evictionFailure;
    /** Guarded by the lock, as are the other counts. */
    private long evictions;
    /** Entries that dropped parts instead of leaving ({@link CacheEntry#shed}). */
    private long sheds;
    /** Dirty victims written back; the cache adds the checkpoint's images to them. */
    private long writeBacks;

    /**
     * Evicts from {@code entries} for {@code cache}, a member of {@code budget}, under {@code lock}:
     * signals {@code roomMade} whenever it made room or looked for it, and {@code claimEnded} when
     * a victim's claim held with the lock released ends; writes images owed to {@code checkpoint}
     * through it.
     */
    CacheEvictor(NodeCache cache, CacheBudget budget, NodeMemory memory, ReentrantLock lock, Condition roomMade,
            Condition claimEnded, CachedEntries entries, EntryImages images, CheckpointWriter checkpoint) {
        this.cache = cache;
        this.budget = budget;
        this.memory = memory;
        this.lock = lock;
        this.roomMade = roomMade;
        this.claimEnded = claimEnded;
        this.entries = entries;
        this.images = images;
        this.checkpoint = checkpoint;
    }

    /**
     * Over the eviction target, wakes the evictor; over {@code limit} (the budget, or the target for
     * background work), waits for it, so that a writer never compresses or writes a block itself.
     * Lock held.
     */
    void makeRoom(long limit) {
        if (budget.heldBytes() <= budget.targetBytes()) {
            return;
        }
        requestEviction();
        budget.askOthersToEvict(cache);
        while (budget.heldBytes() > limit && !stopping) {
            if (evictionFailure != null) {
                throw new BetreeIOException("the node cache cannot write back: " + evictionFailure.getMessage(),
                        evictionFailure.getCause() instanceof IOException ? (IOException) evictionFailure.getCause()
                                : new IOException(evictionFailure));
            }
            // At the hard limit, buffers kept for reuse go first when the pool's footprint is what
            // is over: freeing them makes room at once, where evicting means compressing and
            // writing nodes. In a small-cache delete-FIFO load the pool held a median 8 MiB beyond
            // its buffers in use whenever a writer waited here (kept buffers may be an eighth of
            // those in use); freeing them first, the time slow batches spent here went from 4.7 s
            // to 2.0 s and the worst batch from 203 ms to 124 ms. Freed outside the lock: on
            // JDK 22+ freeing a buffer closes its arena, which briefly stops every thread.
            if (limit >= budget.capBytes() && memory.footprint() > entries.accountedBytes()) {
                long freed;
                lock.unlock();
                try {
                    freed = NodeMemory.releaseKeptBuffers();
                } finally {
                    lock.lock();
                }
                if (freed > 0) {
                    memory.remeasureFootprint();
                    continue;
                }
            }
            try {
                // Again on every round: the evictor may have gone idle on a footprint measured
                // before this writer's bytes arrived (footprint() is re-measured once a millisecond).
                requestEviction();
                budget.askOthersToEvict(cache);
                roomMade.await(10, TimeUnit.MILLISECONDS);
                // Whether woken or timed out: with nothing left to evict (everything pinned, only
                // roots left below the budget, or the excess is the pool's share of partly used
                // chunks, which eviction cannot free),
                // going over budget beats waiting for ever. The evictor signals even when it found
                // no victim, so a writer that only checked after a timeout never got here.
                long held = budget.heldBytes();
                if (held > limit && !entries.ring().anyEvictable(held > budget.capBytes())
                        && !budget.othersEvicting(cache)) {
                    return;
                }
            } catch (InterruptedException ie) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }

    /**
     * Queues an eviction task of this cache unless {@link Evictors#TASKS_PER_CACHE} are queued or
     * running already. Two run at once so that one compresses and writes a dirty entry while the
     * other does the same or drops clean ones. Lock held, or called by another member of a shared
     * budget, which does not hold it.
     */
    void requestEviction() {
        while (!stopping && evictionFailure == null) {
            int tasks = evictionTasks.get();
            if (tasks >= Evictors.TASKS_PER_CACHE) {
                return;
            }
            if (evictionTasks.compareAndSet(tasks, tasks + 1)) {
                Evictors.submit(this::evictTask);
                return;
            }
        }
    }

    /** Whether an eviction task of this cache is queued or running. Lock-free. */
    boolean evicting() {
        return evictionTasks.get() > 0;
    }

    /** Whether {@link #stop} has begun: the cache is being released. Lock-free. */
    boolean stopping() {
        return stopping;
    }

    /** Lock held: stops eviction for good, waiting for the tasks queued or running to end. */
    void stop() {
        stopping = true;
        roomMade.signalAll();
        // A task queued or running sees the flag and ends (a write in progress finishes first).
        while (evictionTasks.get() > 0) {
            roomMade.awaitUninterruptibly();
        }
    }

    /** Lock held, clean {@code e} claimed: lets it drop what it can read back, and counts it; true if it did. */
    boolean shedClaimed(CacheEntry e) {
        if (!e.shed()) {
            return false;
        }
        entries.remeasure(e);
        sheds++;
        return true;
    }

    /** Lock held: entries evicted so far. */
    long evictions() {
        return evictions;
    }

    /** Lock held: entries that shed parts so far. */
    long sheds() {
        return sheds;
    }

    /** Lock held: dirty victims written back so far. */
    long writeBacks() {
        return writeBacks;
    }

    /**
     * The eviction task, on a shared evictor thread: while the cache is over its eviction target, drops clean
     * unpinned entries and writes back dirty ones, second-chance clock order. A dirty entry is
     * serialized, compressed and written outside the lock; it leaves the cache only if nobody
     * changed it meanwhile. After {@link #EVICTION_SLICE_NANOS} with work left it queues itself
     * again, behind other caches' tasks. When nothing can be evicted now (everything pinned, or
     * only roots left below the budget) it ends; a writer still short of room asks again.
     */
    private void evictTask() {
        boolean yielded = false;
        lock.lock();
        try {
            yielded = evictForAWhile();
        } catch (RuntimeException | Error e) {
            // Writers waiting for room must learn why none comes, rather than wait forever.
            evictionFailure = e instanceof RuntimeException ? (RuntimeException) e
                    : new IllegalStateException("the evictor failed: " + e, e);
        } finally {
            evictionTasks.decrementAndGet();
            roomMade.signalAll();
            if (yielded) {
                requestEviction();
            }
            lock.unlock();
        }
    }

    /** Evicts while over the eviction target; returns true if it stopped only because its time slice ended. Lock held. */
    private boolean evictForAWhile() {
        long start = System.nanoTime();
        while (!stopping && evictionFailure == null && budget.shouldEvict(cache, budget.heldBytes())) {
            if (System.nanoTime() - start > EVICTION_SLICE_NANOS) {
                return true;
            }
            // Writers wait past the budget: free memory at once where a clean entry allows.
            // Roots are written back only then: a root that writers append to is changed again
            // before its write-back ends, so it stays in memory anyway, and writers wait while it
            // is serialized (up to 80 ms per batch in a 30 M-row iiBench).
            boolean overHardLimit = budget.heldBytes() > budget.capBytes();
            CacheEntry victim = overHardLimit ? entries.ring().nextCleanVictim() : null;
            if (victim == null) {
                victim = entries.ring().nextVictim(overHardLimit);
            }
            if (victim == null) {
                return false;
            }
            if (!victim.claim()) {
                continue; // pinned since nextVictim looked
            }
            if (victim.clean()) {
                // Also on probation: the victim stays first, but the evictor often stops (back
                // under its target) before it comes back to it, and a read meanwhile moves the
                // leaf to the clock at the cost of a few KB instead of a read of 100 KB.
                if (shedClaimed(victim)) {
                    victim.unclaim();
                    roomMade.signalAll();
                    continue;
                }
                entries.remove(victim);
                victim.releaseMemory();
                evictions++;
                roomMade.signalAll();
                continue;
            }
            writeOut(victim);
        }
        return false;
    }

    /**
     * Lock held, victim claimed: serializes, compresses and writes the dirty victim's image with
     * the lock released, so that pins of other entries and additions go on meanwhile (serializing
     * an internal node with full buffers under the lock held the flusher and writers up to 45 s of
     * a small-cache iiBench run). The claim lasts while the image is taken, so nobody pins (and so
     * changes) the victim then; a pinner on the locked path waits for it
     * ({@code NodeCache.pinnableEntry}). Afterwards writers may pin it again; it leaves the cache
     * only if nobody changed it.
     */
    private void writeOut(CacheEntry victim) {
        boolean forCheckpoint = victim.checkpointPending;
        victim.checkpointPending = false;
        victim.writing = true;
        if (forCheckpoint) {
            checkpoint.imageWriteStarted();
        }
        long version = victim.version;
        RuntimeException failed = null;
        boolean current = false;
        lock.unlock();
        try {
            ByteBuf image;
            try {
                image = images.serialize(victim);
            } finally {
                lock.lock();
                try {
                    victim.unclaim();
                    claimEnded.signalAll();
                } finally {
                    lock.unlock();
                }
            }
            current = images.writeImage(victim.blockNumber(), image, victim.compressor(), forCheckpoint);
        } catch (RuntimeException e) {
            failed = e;
        } finally {
            lock.lock();
        }
        victim.writing = false;
        if (forCheckpoint) {
            checkpoint.imageWriteEnded();
        }
        if (failed != null) {
            evictionFailure = failed;
            victim.checkpointPending = forCheckpoint;
        } else {
            writeBacks++;
            // A checkpoint that began during the write marked the entry again: its image must go
            // to that checkpoint, so the entry stays (dirty and marked) for the checkpointer. A
            // pinned entry may be in the middle of a change, so it stays dirty as well.
            // Claim before comparing versions: a writer that unpins between a comparison and the
            // claim would otherwise have its change marked clean and dropped. A checkpoint image
            // that did not become the current version leaves the entry dirty (see
            // BackingStore#writeCheckpointImage).
            if (victim.claim()) {
                if (current && victim.version == version && !victim.checkpointPending
                        && entries.get(victim.blockNumber()) == victim) {
                    victim.dirty = false;
                    entries.remove(victim);
                    victim.releaseMemory();
                    evictions++;
                } else {
                    victim.unclaim();
                }
            }
        }
        roomMade.signalAll();
    }
}
