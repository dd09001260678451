package io.betree.internal.cache;

import io.betree.compression.BlockCompressor;
import io.betree.internal.fault.BetreeIOException;
import io.betree.internal.memory.NodeMemory;
import io.netty.buffer.ByteBuf;
import java.io.IOException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
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
    private final ConcurrentHashMap<Long, CacheEntry> entries = new ConcurrentHashMap<>();
    /** Guarded by the lock, as is everything below that is not final or atomic. */
    private final ClockRing ring = new ClockRing();
    private final AtomicLong accountedBytes = new AtomicLong();
    private final CheckpointImages checkpoint = new CheckpointImages();
    /** How long one eviction task runs before it lets other caches' tasks go first. */
    private static final long EVICTION_SLICE_NANOS = TimeUnit.MILLISECONDS.toNanos(50);
    private final Condition roomMade = lock.newCondition();
    /** Signalled when a claim held with the lock released ends (see {@link #writeOut}). */
    private final Condition claimEnded = lock.newCondition();
    /** Eviction tasks queued or running, at most {@link Evictors#TASKS_PER_CACHE}; other members of a shared budget read it. */
    private final AtomicInteger evictionTasks = new AtomicInteger();
    private volatile boolean stopping;
    /** Checkpoint images the evictor is writing or pinners copying now; the checkpoint must not finish before them. */
    private int checkpointWritesInFlight;
    private volatile RuntimeException evictionFailure;
    private long evictions;
    /** Entries that dropped parts instead of leaving ({@link CacheEntry#shed}); cache lock. */
    private long sheds;
    private final AtomicLong partialFetches = new AtomicLong();
    private long writeBacks;
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
            ring.use(cached);
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
        E cached = pinCached(blockNumber, type);
        if (cached != null) {
            return cached;
        }
        misses.incrementAndGet();
        return insertOrPinRaced(loader.load(blockNumber, store.fetch(blockNumber)), type);
    }

    /** Whether the entry of {@code blockNumber} is in the cache now. Lock-free. */
    public boolean isCached(long blockNumber) {
        return entries.containsKey(blockNumber);
    }

    /**
     * Reads the block of {@code blockNumber} into the cache, unpinned, unless it is cached: for a
     * caller that will pin it shortly and wants the read started now. Any thread; the caller keeps
     * the block from being freed until this returns.
     *
     * @throws io.betree.internal.fault.CorruptionException if the stored block is damaged
     */
    public void prefetch(long blockNumber, EntryLoader<?> loader) {
        if (entries.containsKey(blockNumber)) {
            return;
        }
        misses.incrementAndGet();
        CacheEntry made = loader.load(blockNumber, store.fetch(blockNumber));
        lock.lock();
        try {
            if (stopping || pinnableEntry(blockNumber) != null) {
                made.releaseMemory();
                return;
            }
            made.setPins(0);
            // Counted as used, not on probation: its reader pins it shortly, and a loaded entry
            // nobody has used yet is the evictor's first victim.
            insert(made, false);
        } finally {
            lock.unlock();
        }
    }

    /** Pins the cached entry of {@code blockNumber}, capturing a checkpoint image it owes first; null if absent. */
    private <E extends CacheEntry> E pinCached(long blockNumber, Class<E> type) {
        CacheEntry cached = entries.get(blockNumber);
        if (cached != null && !cached.checkpointPending && cached.tryPin()) {
            ring.use(cached);
            return castPinned(cached, type);
        }
        lock.lock();
        try {
            CacheEntry e = pinnableEntry(blockNumber);
            while (e != null && e.checkpointPending && !e.writing && e.claim()) {
                captureOutsideLock(e);
                e = pinnableEntry(blockNumber);
            }
            if (e != null) {
                captureIfPending(e);
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
                captureIfPending(raced);
                pinLocked(raced);
                return castPinned(raced, type);
            }
            made.setPins(1);
            insert(made, true);
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
        ring.use(e);
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
            if (entries.containsKey(e.blockNumber())) {
                throw new IllegalStateException("block " + e.blockNumber() + " is already cached");
            }
            e.setPins(1);
            e.dirty = true;
            insert(e, false);
        } finally {
            lock.unlock();
        }
    }

    /** Lock held: caches {@code e}, on probation when {@code loaded} from its block ({@link ClockRing}). */
    private void insert(CacheEntry e, boolean loaded) {
        if (loaded) {
            ring.addLoaded(e);
        } else {
            ring.add(e);
            e.referenced = true;
        }
        entries.put(e.blockNumber(), e); // after its ring state: pinners that find it read that
        e.accountedBytes = e.memoryBytes();
        accountedBytes.addAndGet(e.accountedBytes);
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
            long now = e.memoryBytes();
            accountedBytes.addAndGet(now - e.accountedBytes);
            e.accountedBytes = now;
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
        long now = e.memoryBytes();
        accountedBytes.addAndGet(now - e.accountedBytes);
        e.accountedBytes = now;
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
                return e.clean() && shedClaimed(e);
            } finally {
                e.unclaim();
            }
        } finally {
            lock.unlock();
        }
    }

    /** Lock held, clean {@code e} claimed: lets it drop what it can read back, and counts it; true if it did. */
    private boolean shedClaimed(CacheEntry e) {
        if (!e.shed()) {
            return false;
        }
        remeasure(e);
        sheds++;
        return true;
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
            return ring.anyEvictable(false) ? (double) over / (budget.capBytes() - budget.targetBytes()) : 0;
        } finally {
            lock.unlock();
        }
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
                makeRoom(limit);
            } finally {
                lock.unlock();
            }
        }
    }

    /**
     * Over the eviction target, wakes the evictor; over {@code limit} (the budget, or the target for
     * background work), waits for it, so that a writer never compresses or writes a block itself.
     * Lock held.
     */
    private void makeRoom(long limit) {
        if (budget.heldBytes() <= budget.targetBytes()) {
            return;
        }
        requestEviction();
        budget.askOthersToEvict(this);
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
            if (limit >= budget.capBytes() && memory.footprint() > accountedBytes.get()) {
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
                budget.askOthersToEvict(this);
                roomMade.await(10, TimeUnit.MILLISECONDS);
                // Whether woken or timed out: with nothing left to evict (everything pinned, only
                // roots left below the budget, or the excess is the pool's share of partly used
                // chunks, which eviction cannot free),
                // going over budget beats waiting for ever. The evictor signals even when it found
                // no victim, so a writer that only checked after a timeout never got here.
                long held = budget.heldBytes();
                if (held > limit && !ring.anyEvictable(held > budget.capBytes()) && !budget.othersEvicting(this)) {
                    return;
                }
            } catch (InterruptedException ie) {
                Thread.currentThread().interrupt();
                return;
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
        return Math.max(accountedBytes.get(), memory.footprint());
    }

    /**
     * Drops a pinned entry whose block has been freed: its memory is released and nothing is
     * written. The caller frees the block number in storage.
     */
    public void discard(CacheEntry e) {
        lock.lock();
        try {
            awaitNotWriting(e);
            captureIfPending(e);
            remove(e);
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
            captureIfPending(e);
            remove(e);
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

    /** Lock held: the entry leaves the map and the ring; no pin can be taken on it afterwards. */
    private void remove(CacheEntry e) {
        e.markGone();
        entries.remove(e.blockNumber(), e);
        ring.remove(e);
        accountedBytes.addAndGet(-e.accountedBytes);
    }

    /**
     * Queues an eviction task of this cache unless {@link Evictors#TASKS_PER_CACHE} are queued or
     * running already. Two run at once so that one compresses and writes a dirty entry while the
     * other does the same or drops clean ones. Lock held.
     */
    private void requestEviction() {
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

    /** As {@link #requestEviction}, for another member of a shared budget, which does not hold this cache's lock. */
    void requestEvictionFromOutside() {
        requestEviction();
    }

    /** Whether an eviction task of this cache is queued or running. */
    boolean evicting() {
        return evictionTasks.get() > 0;
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
        while (!stopping && evictionFailure == null && budget.shouldEvict(this, budget.heldBytes())) {
            if (System.nanoTime() - start > EVICTION_SLICE_NANOS) {
                return true;
            }
            // Writers wait past the budget: free memory at once where a clean entry allows.
            // Roots are written back only then: a root that writers append to is changed again
            // before its write-back ends, so it stays in memory anyway, and writers wait while it
            // is serialized (up to 80 ms per batch in a 30 M-row iiBench).
            boolean overHardLimit = budget.heldBytes() > budget.capBytes();
            CacheEntry victim = overHardLimit ? ring.nextCleanVictim() : null;
            if (victim == null) {
                victim = ring.nextVictim(overHardLimit);
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
                remove(victim);
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
     * changes) the victim then; a pinner on the locked path waits for it ({@link #pinnableEntry}).
     * Afterwards writers may pin it again; it leaves the cache only if nobody changed it.
     */
    private void writeOut(CacheEntry victim) {
        boolean forCheckpoint = victim.checkpointPending;
        victim.checkpointPending = false;
        victim.writing = true;
        if (forCheckpoint) {
            checkpointWritesInFlight++;
        }
        long version = victim.version;
        RuntimeException failed = null;
        boolean current = false;
        lock.unlock();
        try {
            ByteBuf image;
            try {
                image = serialize(victim);
            } finally {
                lock.lock();
                try {
                    victim.unclaim();
                    claimEnded.signalAll();
                } finally {
                    lock.unlock();
                }
            }
            current = writeImage(victim.blockNumber(), image, victim.compressor(), forCheckpoint);
        } catch (RuntimeException e) {
            failed = e;
        } finally {
            lock.lock();
        }
        victim.writing = false;
        if (forCheckpoint) {
            checkpointWritesInFlight--;
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
                    remove(victim);
                    victim.releaseMemory();
                    evictions++;
                } else {
                    victim.unclaim();
                }
            }
        }
        roomMade.signalAll();
    }

    private ByteBuf serialize(CacheEntry e) {
        return serialize(e, false);
    }

    /**
     * The checkpoint image of {@code e}: {@link CacheEntry#serializeImage} for an entry kept
     * resident (a root, which nearly every write changes, so its image is soon replaced), so that
     * its pinner, or a pinner waiting for the checkpointer, holds up no writer for a slow form
     * nobody is likely to read. Other entries may stay unchanged, their image then being what
     * later loads read, so they get the on-disk form.
     */
    private ByteBuf serializeImage(CacheEntry e) {
        return serialize(e, e.keptResident);
    }

    private ByteBuf serialize(CacheEntry e, boolean quick) {
        ByteBuf out = memory.allocate(e.serializedSizeBound());
        try {
            if (quick) {
                e.serializeImage(out);
            } else {
                e.serialize(out);
            }
            return out;
        } catch (RuntimeException ex) {
            memory.release(out);
            throw ex;
        }
    }

    /**
     * Writes (and releases) an image of block {@code block}, for a checkpoint or as a write-back;
     * returns whether it became the block's current version.
     */
    private boolean writeImage(long block, ByteBuf image, BlockCompressor codec, boolean forCheckpoint) {
        try {
            if (forCheckpoint) {
                return store.writeCheckpointImage(block, image, codec);
            }
            store.writeBack(block, image, codec);
            return true;
        } finally {
            memory.release(image);
        }
    }

    private void captureIfPending(CacheEntry e) {
        checkpoint.captureIfOwed(e, this::serializeImage);
    }

    /**
     * Lock held, {@code e} claimed and owed to the checkpoint: copies its image for the checkpoint
     * with the lock released, as {@link #writeOut} does (an internal node with full buffers takes
     * tens of milliseconds, which every pin on the locked path would otherwise wait), then ends
     * the claim. Counted as a checkpoint write in flight, so that the checkpoint waits for it.
     */
    private void captureOutsideLock(CacheEntry e) {
        long generation = checkpoint.generation();
        checkpointWritesInFlight++;
        try {
            CheckpointImages.Image image = takeImageOutsideLock(e);
            if (checkpoint.generation() == generation) {
                checkpoint.addCaptured(image);
            } else {
                memory.release(image.bytes()); // the checkpoint it was for has been abandoned
            }
        } finally {
            checkpointWritesInFlight--;
            roomMade.signalAll();
        }
    }

    /**
     * Lock held, {@code e} claimed and owed to the checkpoint: takes its image with the lock
     * released and ends the claim, the lock held again. Pinners on the locked path wait meanwhile
     * ({@link #pinnableEntry}); if serializing fails, the entry stays owed.
     */
    private CheckpointImages.Image takeImageOutsideLock(CacheEntry e) {
        long version = e.version;
        e.checkpointPending = false;
        e.writing = true;
        boolean taken = false;
        lock.unlock();
        try {
            ByteBuf bytes = serializeImage(e);
            taken = true;
            return new CheckpointImages.Image(e, version, bytes, false); // taken only when not being written
        } finally {
            lock.lock();
            e.writing = false;
            e.checkpointPending = !taken;
            e.unclaim();
            claimEnded.signalAll();
            roomMade.signalAll();
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
            checkpoint.begin(ring);
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
        while (true) {
            CheckpointImages.Image image;
            lock.lock();
            try {
                while (true) {
                    image = checkpoint.nextCaptured();
                    if (image == null) {
                        CacheEntry owed = checkpoint.nextOwed();
                        if (owed != null) {
                            // Pinned (by readers) or being written back: copied under the lock.
                            image = !owed.writing && owed.claim() ? takeImageOutsideLock(owed)
                                    : checkpoint.take(owed, this::serializeImage);
                            break;
                        }
                    }
                    if (image != null || checkpointWritesInFlight == 0) {
                        break;
                    }
                    // The evictor is writing images for this checkpoint: wait, then look again
                    // (a failed write hands its entry back, marked).
                    roomMade.awaitUninterruptibly();
                    checkpoint.rescan();
                }
            } finally {
                lock.unlock();
            }
            if (image == null) {
                break;
            }
            CacheEntry e = image.entry();
            boolean current = writeImage(e.blockNumber(), image.bytes(), e.compressor(), true);
            lock.lock();
            try {
                writeBacks++;
                // Clean only if the image is now what a read of the block finds, and no write-back
                // of an earlier state is on its way to replace it, nor was when the image was
                // taken (it may have ended since, after this image became current, and replaced it).
                if (current && !e.writing && !image.earlierWriteInFlight() && e.ringIndex >= 0
                        && entries.get(e.blockNumber()) == e && e.claim()) {
                    if (e.version == image.version()) { // compared under the claim, as in writeOut
                        e.dirty = false;
                    }
                    e.unclaim();
                }
            } finally {
                lock.unlock();
            }
        }
        lock.lock();
        try {
            checkpoint.end();
        } finally {
            lock.unlock();
        }
    }

    /** Forgets a failed checkpoint's marks and copies. */
    public void abortCheckpoint() {
        lock.lock();
        try {
            checkpoint.clear(ring, memory);
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
            stopping = true;
            roomMade.signalAll();
            // A task queued or running sees the flag and ends (a write in progress finishes first).
            while (evictionTasks.get() > 0) {
                roomMade.awaitUninterruptibly();
            }
            for (CacheEntry e : ring) {
                e.releaseMemory();
            }
            checkpoint.releaseCaptured(memory);
            ring.clear();
            entries.clear();
            accountedBytes.set(0);
        } finally {
            lock.unlock();
        }
        budget.leave(this);
    }

    /** Counters for tests and statistics. */
    public Stats stats() {
        lock.lock();
        try {
            return new Stats(entries.size(), accountedBytes.get(), budget.capBytes(), misses.get(), evictions,
                    writeBacks, sheds, partialFetches.get());
        } finally {
            lock.unlock();
        }
    }

    /**
     * A snapshot of the cache's counters: {@code sheds} counts entries that dropped parts instead of
     * leaving, {@code partialFetches} the reads of such parts back.
     */
    public record Stats(int entries, long bytes, long budgetBytes, long misses, long evictions, long writeBacks,
            long sheds, long partialFetches) {
    }
}
