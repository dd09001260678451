package io.betree.internal.cache;

import io.betree.internal.memory.NodeMemory;
import io.netty.buffer.ByteBuf;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The environment's node cache: every index's nodes, bounded by one byte budget, with pinning,
 * clock eviction and write-back of dirty entries. Entries are keyed by logical block number, which
 * is unique across the indexes of an environment because they share one block file.
 *
 * <p>Thread-safe. An entry returned by {@link #pin} stays in memory until the matching
 * {@link #unpin}; between the two the caller may read it, and may change it when it holds the
 * owning index's write lock. Pinned entries are never evicted, so the budget can be exceeded by
 * at most what is pinned at once (a few root-to-leaf paths); roots, kept resident, are evicted
 * only past the budget; the evictor works from a little below it.
 *
 * <p>Pinning a cached entry and unpinning take no lock: the map is concurrent and the pin count is
 * changed by compare-and-set. Whoever must have an entry to itself (the evictor removing or
 * serializing it, a checkpoint marking it clean) <em>claims</em> it, which only succeeds while it
 * is unpinned and makes lock-free pins fail over to the locked path until the claim ends; an entry
 * that left the cache stays claimed for good. Claims are taken and ended under the cache's lock
 * within one hold of it, except while an image is serialized (by the evictor, or for a checkpoint),
 * for which the locked path waits. A pinner that finds the entry owed to a checkpoint also takes
 * the locked path, which copies the image first. This is safe because whoever changes an entry holds its tree's lock from
 * before the pin until after the unpin, and a checkpoint marks entries only while it holds every
 * tree's lock.
 */
public final class NodeCache {
    private final BackingStore store;
    private final NodeMemory memory;
    /** The cap this cache draws on, alone or with other environments' caches. */
    private final CacheBudget budget;
    private final ReentrantLock lock = new ReentrantLock();
    /** The map, the clock ring and the bytes accounted; they change, and the ring is read, under the lock. */
    private final CachedEntries entries = new CachedEntries();
    private final Condition roomMade = lock.newCondition();
    /**
     * Signalled when a claim held with the lock released ends: the evictor's write-back of a victim,
     * or a checkpoint image taken outside the lock.
     */
    private final Condition claimEnded = lock.newCondition();
    /** Marks, copies and writes a checkpoint's images; under the lock but for its writes. */
    private final CheckpointWriter checkpoint;
    /** Runs the eviction tasks and holds writers until they made room; under the lock. */
    private final CacheEvictor evictor;
    private final AtomicLong partialFetches = new AtomicLong();
    private final AtomicLong rangeFetches = new AtomicLong();
    private final AtomicLong misses = new AtomicLong();

    /**
     * A cache with a budget of its own, {@code budgetBytes}, over {@code store}, its entries in
     * {@code memory}. Eviction runs on the process's shared evictor threads ({@link Evictors})
     * until {@link #releaseAll()}.
     */
    public NodeCache(BackingStore store, NodeMemory memory, long budgetBytes) {
        this(store, memory, new CacheBudget(budgetBytes));
    }

    /** As above, drawing on {@code budget}, which other caches may share, until {@link #releaseAll()}. */
    public NodeCache(BackingStore store, NodeMemory memory, CacheBudget budget) {
        this.store = store;
        this.memory = memory;
        this.budget = budget;
        EntryImages images = new EntryImages(store, memory);
        this.checkpoint = new CheckpointWriter(lock, roomMade, claimEnded, memory, entries, images);
        this.evictor = new CacheEvictor(this, budget, memory, lock, roomMade, claimEnded, entries, images, checkpoint);
        budget.join(this);
    }

    /** The environment's off-heap memory. */
    public NodeMemory memory() {
        return memory;
    }

    /**
     * Pins the entry of {@code blockNumber} if it is in the cache and free to pin at once; returns
     * null, having read and waited for nothing, otherwise (absent, owed to a checkpoint, or
     * claimed by the evictor).
     */
    public CacheEntry pinIfCached(long blockNumber) {
        CacheEntry cached = entries.get(blockNumber);
        if (cached != null && !cached.checkpointPending && cached.tryPin()) {
            entries.ring().use(cached);
            return cached;
        }
        return null;
    }

    /**
     * Pins the entry of {@code blockNumber}, fetching it from the backing store when absent.
     *
     * @throws io.betree.internal.fault.CorruptionException if the stored block is damaged
     */
    public <E extends CacheEntry> E pin(long blockNumber, Class<E> type, EntryLoader<E> loader) {
        return pin(blockNumber, Integer.MAX_VALUE, type, loader);
    }

    /**
     * As {@link #pin}, but a block fetched from the backing store is read only in part where the
     * store can ({@link BackingStore#fetchPrefix}): the loader gets its first {@code prefixBytes},
     * or the whole block, and makes what it can of them (a leaf's basement list, without its key
     * filters).
     *
     * @throws io.betree.internal.fault.CorruptionException if the stored block is damaged
     */
    public <E extends CacheEntry> E pinReadingPrefix(long blockNumber, int prefixBytes, Class<E> type,
            EntryLoader<E> loader) {
        return pin(blockNumber, prefixBytes, type, loader);
    }

    /** {@link #pinReadingPrefix}; {@link Integer#MAX_VALUE} bytes: the whole block, as {@link #pin} reads it. */
    private <E extends CacheEntry> E pin(long blockNumber, int prefixBytes, Class<E> type, EntryLoader<E> loader) {
        E cached = pinCached(blockNumber, type);
        if (cached != null) {
            return cached;
        }
        misses.incrementAndGet();
        ByteBuf data = prefixBytes == Integer.MAX_VALUE ? store.fetch(blockNumber)
                : store.fetchPrefix(blockNumber, prefixBytes);
        return insertOrPinRaced(loader.load(blockNumber, data), type);
    }

    /** Whether the entry of {@code blockNumber} is in the cache now. Lock-free. */
    public boolean isCached(long blockNumber) {
        return entries.contains(blockNumber);
    }

    /**
     * Reads the block of {@code blockNumber} into the cache, unpinned, unless it is cached: for a
     * caller that will pin it shortly and wants the read started now. Any thread; the caller keeps
     * the block from being freed until this returns.
     *
     * @throws io.betree.internal.fault.CorruptionException if the stored block is damaged
     */
    public void prefetch(long blockNumber, EntryLoader<?> loader) {
        if (entries.contains(blockNumber)) {
            return;
        }
        misses.incrementAndGet();
        CacheEntry made = loader.load(blockNumber, store.fetch(blockNumber));
        lock.lock();
        try {
            if (evictor.stopping() || pinnableEntry(blockNumber) != null) {
                made.releaseMemory();
                return;
            }
            made.setPins(0);
            // Counted as used, not on probation: its reader pins it shortly, and a loaded entry
            // nobody has used yet is the evictor's first victim.
            entries.insert(made, false);
        } finally {
            lock.unlock();
        }
    }

    /** Pins the cached entry of {@code blockNumber}, capturing a checkpoint image it owes first; null if absent. */
    private <E extends CacheEntry> E pinCached(long blockNumber, Class<E> type) {
        CacheEntry cached = entries.get(blockNumber);
        if (cached != null && !cached.checkpointPending && cached.tryPin()) {
            entries.ring().use(cached);
            return castPinned(cached, type);
        }
        lock.lock();
        try {
            CacheEntry e = pinnableEntry(blockNumber);
            while (e != null && e.checkpointPending && !e.writing && e.claim()) {
                checkpoint.captureOutsideLock(e);
                e = pinnableEntry(blockNumber);
            }
            if (e != null) {
                checkpoint.captureIfPending(e);
                pinLocked(e);
                return castPinned(e, type);
            }
            return null;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Inserts {@code made}, pinned, loaded outside the lock for an absent block, or, when another
     * thread cached that block meanwhile, releases it and pins that one.
     */
    private <E extends CacheEntry> E insertOrPinRaced(E made, Class<E> type) {
        lock.lock();
        try {
            CacheEntry raced = pinnableEntry(made.blockNumber());
            if (raced != null) {
                made.releaseMemory();
                checkpoint.captureIfPending(raced);
                pinLocked(raced);
                return castPinned(raced, type);
            }
            made.setPins(1);
            entries.insert(made, true);
            return made;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Lock held: the cached entry of {@code blockNumber}, or null; waits first while its image is
     * serialized, the one claim held with the lock released.
     */
    private CacheEntry pinnableEntry(long blockNumber) {
        CacheEntry e = entries.get(blockNumber);
        while (e != null && e.writing && e.pins() < 0) {
            claimEnded.awaitUninterruptibly();
            e = entries.get(blockNumber);
        }
        return e;
    }

    /**
     * Lock held: pins an entry of the map, which nobody can have claimed outside the lock except
     * to serialize it, which {@link #pinnableEntry} waits out.
     */
    private void pinLocked(CacheEntry e) {
        if (!e.tryPin()) {
            throw new IllegalStateException("block " + e.blockNumber() + " is claimed outside the cache lock");
        }
        entries.ring().use(e);
    }

    /** Casts a pinned entry to the type its caller expects; on a mismatch unpins it and throws. */
    private static <E extends CacheEntry> E castPinned(CacheEntry e, Class<E> type) {
        if (!type.isInstance(e)) {
            e.releasePin();
            throw new IllegalStateException("block " + e.blockNumber() + " holds a " + e.getClass().getSimpleName()
                    + ", expected a " + type.getSimpleName());
        }
        return type.cast(e);
    }

    /** Adds a new entry, pinned once and dirty (it has never been written). */
    public void add(CacheEntry e) {
        lock.lock();
        try {
            if (entries.contains(e.blockNumber())) {
                throw new IllegalStateException("block " + e.blockNumber() + " is already cached");
            }
            e.setPins(1);
            e.dirty = true;
            entries.insert(e, false);
        } finally {
            lock.unlock();
        }
    }

    /**
     * Releases one pin. {@code modified} marks the entry dirty; its size is re-measured, and
     * entries are evicted when the cache is over its eviction target.
     */
    public void unpin(CacheEntry e, boolean modified) {
        release(e, modified);
        awaitRoom();
    }

    /**
     * As {@link #unpin}, but never waits for the evictor: for a caller holding a latch that others
     * wait on (the root's), which calls {@link #awaitRoom} once it has let go of it.
     */
    public void release(CacheEntry e, boolean modified) {
        if (e.pins() <= 0) {
            throw new IllegalStateException("block " + e.blockNumber() + " is not pinned");
        }
        if (modified) {
            // Before the pin goes: nobody can claim (evict, mark clean) the entry until then. The
            // modifier holds its tree's lock, so two of these never run at once for one entry.
            entries.remeasure(e);
            e.dirty = true;
            e.version++;
            e.referenced = true; // changed: used, whatever its reader did
        }
        e.releasePin();
    }

    /**
     * Brings the cache's count of {@code e}'s bytes up to date after it grew outside a modification:
     * a reader read back a part it had shed ({@link CacheEntry#shed}). The caller has {@code e}
     * pinned and is the only one changing its size (it holds a lock of the entry's own that every
     * such reader takes); or, for the evictor, has it claimed.
     */
    public void remeasure(CacheEntry e) {
        entries.remeasure(e);
    }

    /**
     * Asks {@code e}, cached, to drop what it can read back ({@link CacheEntry#shed}) now, as the
     * evictor does with a clean victim; false, changing nothing, if it is pinned, dirty or has
     * nothing to drop.
     */
    public boolean shed(CacheEntry e) {
        lock.lock();
        try {
            if (entries.get(e.blockNumber()) != e || e.writing || !e.claim()) {
                return false;
            }
            try {
                return e.clean() && evictor.shedClaimed(e);
            } finally {
                e.unclaim();
            }
        } finally {
            lock.unlock();
        }
    }

    /**
     * The stored form of {@code blockNumber} read again, for a cached entry that shed parts of it
     * ({@link CacheEntry#shed}); the caller takes the buffer.
     */
    public ByteBuf fetchAgain(long blockNumber) {
        partialFetches.incrementAndGet();
        return store.fetch(blockNumber);
    }

    /**
     * Bytes {@code [from, from + length)} of block {@code blockNumber} as stored, unchecked, read
     * for a caller that does not cache them ({@link BackingStore#fetchRange}); the caller takes the
     * buffer, whose readable bytes are the range or, when it lies outside the block, none.
     */
    public ByteBuf fetchRange(long blockNumber, int from, int length) {
        rangeFetches.incrementAndGet();
        return store.fetchRange(blockNumber, from, length);
    }

    /**
     * Over the eviction target, wakes the evictor; over the budget, waits until it has made room. Callers
     * hold no latch that others wait on.
     */
    public void awaitRoom() {
        awaitBelow(budget.capBytes());
    }

    /**
     * How far the cache has gone into its headroom: 0 within its eviction target, 1 at the budget (more
     * past it). Back-pressure slows writers as it rises, before they must stop at the limit.
     */
    public double headroomUsed() {
        long over = budget.heldBytes() - budget.targetBytes();
        if (over <= 0) {
            return 0;
        }
        // What eviction cannot free (roots kept resident, the pool's partly used chunks) must not
        // slow writers for good: only a cache the evictor can bring down counts.
        lock.lock();
        try {
            return entries.ring().anyEvictable(false) ? (double) over / (budget.capBytes() - budget.targetBytes()) : 0;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Whether the budget's caches hold within a sixteenth of its eviction target: whatever is read
     * in now soon pushes something else out. (At the target itself would miss most of the time:
     * the evictor brings the caches just below it.) A moment's view, lock-free.
     */
    public boolean full() {
        return budget.heldBytes() >= budget.targetBytes() - budget.targetBytes() / 16;
    }

    /**
     * Waits until the cache is back within its eviction target, not just its budget: for background
     * work that brings nodes in by the megabyte (a flush step loads and rewrites children), so
     * that the headroom between target and budget stays free for writers, who wait only past
     * the budget. Without it a flush step's burst took the cache past its limit and the
     * writers waited for the evictor (up to 110 ms in a 30 M-row iiBench).
     */
    public void awaitBudget() {
        awaitBelow(budget.targetBytes());
    }

    private void awaitBelow(long limit) {
        if (budget.heldBytes() > budget.targetBytes()) {
            lock.lock();
            try {
                evictor.makeRoom(limit);
            } finally {
                lock.unlock();
            }
        }
    }

    /**
     * What the budget limits: the cached entries, or, when larger, the environment's whole share of
     * the off-heap pool (buffers outside the cache, such as checkpoint images and merges in
     * progress, and chunks that are only partly used). Also read without the lock, where a figure
     * a moment old will do ({@link #awaitBelow}'s first check, {@link #headroomUsed}).
     */
    long ownHeldBytes() {
        return Math.max(entries.accountedBytes(), memory.footprint());
    }

    /**
     * Drops a pinned entry whose block has been freed: its memory is released and nothing is
     * written. The caller frees the block number in storage.
     */
    public void discard(CacheEntry e) {
        lock.lock();
        try {
            awaitNotWriting(e);
            checkpoint.captureIfPending(e);
            entries.remove(e);
        } finally {
            lock.unlock();
        }
        e.releaseMemory();
    }

    /**
     * Drops the entry of a block that is being freed, if it is cached, without loading it.
     *
     * @throws IllegalStateException if the entry is pinned
     */
    public void discardIfCached(long blockNumber) {
        CacheEntry e;
        lock.lock();
        try {
            e = entries.get(blockNumber);
            if (e == null) {
                return;
            }
            if (e.pins() > 0) {
                throw new IllegalStateException("block " + blockNumber + " is freed while pinned");
            }
            awaitNotWriting(e);
            if (entries.get(blockNumber) != e) {
                return;
            }
            if (!e.claim()) {
                throw new IllegalStateException("block " + blockNumber + " is freed while pinned");
            }
            checkpoint.captureIfPending(e);
            entries.remove(e);
        } finally {
            lock.unlock();
        }
        e.releaseMemory();
    }

    /** Waits while an image of {@code e} is taken or written: a block must not be freed under it. Lock held. */
    private void awaitNotWriting(CacheEntry e) {
        while (e.writing) {
            roomMade.awaitUninterruptibly();
        }
    }

    /**
     * As {@link CacheEvictor#requestEviction}, for another member of a shared budget, which does not
     * hold this cache's lock.
     */
    void requestEvictionFromOutside() {
        evictor.requestEviction();
    }

    /** Whether an eviction task of this cache is queued or running. */
    boolean evicting() {
        return evictor.evicting();
    }

    /** Wakes writers waiting for room, if the lock is free now (they look again every 10 ms anyway). */
    void signalRoom() {
        if (lock.tryLock()) {
            try {
                roomMade.signalAll();
            } finally {
                lock.unlock();
            }
        }
    }

    /**
     * Begins a checkpoint: runs {@code storageBegin} (the block file's snapshot of its current
     * table) and marks every dirty entry as owed to the checkpoint, in one hold of the cache lock.
     * The caller holds every index's write lock, so no entry is half-modified; the evictor takes no
     * tree lock, though, and a write-back that ended between a snapshot and the marks left the
     * snapshot with the block's earlier version (or none, for a new block) while the evictor
     * dropped the entry as clean, so nobody wrote the image the checkpoint owed: the leaf of a
     * crash-tested database named a basement its checkpoint had never written.
     */
    public void beginCheckpoint(Runnable storageBegin) {
        lock.lock();
        try {
            storageBegin.run();
            checkpoint.begin();
        } finally {
            lock.unlock();
        }
    }

    /**
     * Writes the checkpoint image of every entry marked by {@link #beginCheckpoint} while writers
     * go on. An entry a writer pins first is copied in memory at that moment (the copy is written
     * here); the others are serialized here, one at a time. Both copy with the entry claimed and
     * the cache lock released where the entry is not pinned, so other pins and the evictor go on.
     */
    public void writeCheckpointImages() {
        checkpoint.writeOwedImages();
    }

    /** Forgets a failed checkpoint's marks and copies. */
    public void abortCheckpoint() {
        lock.lock();
        try {
            checkpoint.abort();
        } finally {
            lock.unlock();
        }
    }

    /**
     * Stops the evictor and releases every entry's memory without writing; the cache is unusable
     * afterwards.
     */
    public void releaseAll() {
        lock.lock();
        try {
            evictor.stop();
            for (CacheEntry e : entries.ring()) {
                e.releaseMemory();
            }
            checkpoint.releaseCaptured();
            entries.clear();
        } finally {
            lock.unlock();
        }
        budget.leave(this);
    }

    /** Whether {@link #releaseAll} has begun: nothing may be pinned any more. Lock-free. */
    public boolean released() {
        return evictor.stopping();
    }

    /** Counters for tests and statistics. */
    public Stats stats() {
        lock.lock();
        try {
            return new Stats(entries.size(), entries.accountedBytes(), budget.capBytes(), misses.get(),
                    evictor.evictions(), evictor.writeBacks() + checkpoint.writeBacks(), evictor.sheds(),
                    partialFetches.get(), rangeFetches.get());
        } finally {
            lock.unlock();
        }
    }

    /**
     * A snapshot of the cache's counters: {@code sheds} counts entries that dropped parts instead of
     * leaving, {@code partialFetches} the reads of such parts back, {@code rangeFetches} the reads
     * of parts of blocks that were not cached ({@link #fetchRange}).
     */
    public record Stats(int entries, long bytes, long budgetBytes, long misses, long evictions, long writeBacks,
            long sheds, long partialFetches, long rangeFetches) {
    }
}
