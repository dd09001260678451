package io.betree.internal.cache;

import io.netty.buffer.ByteBuf;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * Something the {@link NodeCache} holds: one block's in-memory form. The object itself is a small
 * heap handle; its contents live in off-heap buffers that it reports through {@link #memoryBytes()}.
 *
 * <p>The pin count is changed without the cache's lock (see {@link NodeCache} for the protocol);
 * {@code dirty}, {@code version} and {@code checkpointPending} are volatile because pinners write
 * or read them without it. {@code accountedBytes} is written by a modifier before it unpins, else
 * under the lock while nobody can pin; {@code referenced} is a hint anyone may set. The other
 * fields are guarded by the cache's lock; contents are guarded by whoever pinned the entry.
 */
public abstract class CacheEntry {
    private static final VarHandle PINS;

    static {
        try {
            PINS = MethodHandles.lookup().findVarHandle(CacheEntry.class, "pins", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /** Logical block number of this entry. */
    private final long blockNumber;
    /**
     * Pins held, or {@link #CLAIMED} while the evictor or the checkpoint has the entry to itself
     * (under the cache's lock) and for ever once the entry has left the cache.
     */
    private volatile int pins;
    volatile boolean dirty;
    boolean referenced;
    /** Sweeps of the clock hand this entry still survives unreferenced; see {@link #extraSweeps}. Cache lock. */
    int sweepsLeft;
    /** A hint, like {@code referenced}: see {@link #keepResident}. */
    boolean keptResident;
    long accountedBytes;
    /** Position in the cache's clock ring, or -1 when not in the ring. */
    int ringIndex = -1;
    /**
     * Read from its block and not used since: among the first to go ({@link ClockRing}). Written
     * under the cache's lock; pinners read it without, as a hint.
     */
    volatile boolean onProbation;
    /** The cache's count of loads when this entry was loaded ({@link ClockRing#use}). */
    long loadedAt;
    /** Dirty when a checkpoint began and its image for that checkpoint not yet taken. */
    volatile boolean checkpointPending;
    /** Counts modifications, so a write-back can tell whether the entry changed meanwhile. */
    volatile long version;
    /**
     * An image of this entry is being taken or written outside the cache lock: by the evictor
     * (until the write ends), or for a checkpoint (while it is serialized, the entry claimed).
     */
    boolean writing;

    private static final int CLAIMED = -1;

    protected CacheEntry(long blockNumber) {
        this.blockNumber = blockNumber;
    }

    /** Adds a pin unless the entry is claimed or gone; lock-free. */
    final boolean tryPin() {
        while (true) {
            int p = pins;
            if (p < 0) {
                return false;
            }
            if (PINS.compareAndSet(this, p, p + 1)) {
                return true;
            }
        }
    }

    /** Releases one pin; lock-free. */
    final void releasePin() {
        while (true) {
            int p = pins;
            if (p <= 0) {
                throw new IllegalStateException("block " + blockNumber + " is not pinned");
            }
            if (PINS.compareAndSet(this, p, p - 1)) {
                return;
            }
        }
    }

    /** Current pins; negative while claimed or once gone. */
    final int pins() {
        return pins;
    }

    /** Takes the unpinned entry for oneself, so that nobody pins it meanwhile; false if pinned. */
    final boolean claim() {
        return PINS.compareAndSet(this, 0, CLAIMED);
    }

    /** Ends a {@link #claim()}, letting pins in again. */
    final void unclaim() {
        pins = 0;
    }

    /** Sets the pins of an entry that nobody else can see yet, or marks one gone ({@link #CLAIMED}). */
    final void setPins(int count) {
        pins = count;
    }

    /** The entry leaves the cache: no pin can be taken on it any more. */
    final void markGone() {
        pins = CLAIMED;
    }

    /**
     * Asks the cache to evict this entry only when it is past its hard limit and no other entry
     * can go: for an entry that nearly
     * every write changes (a tree's root, whose buffers take the writes). Clock order alone evicted
     * such roots several times a second when the cache held little more than them, and each
     * eviction wrote the root's megabytes of messages out to read them back at the next commit.
     * A hint: anyone may set or clear it, pinned or not.
     */
    public final void keepResident(boolean keep) {
        keptResident = keep;
    }

    /**
     * How many more sweeps of the clock hand than a basement this entry survives without being
     * used: an internal node, read again in full whenever a flush reaches it once evicted, is
     * worth keeping over the basements that flushes pass through. 0 unless overridden.
     */
    protected int extraSweeps() {
        return 0;
    }

    /**
     * Whether a checkpoint writes this entry before the entries that do not ask it: a basement,
     * whose write makes the chunk map its leaf's write then records. False unless overridden.
     */
    protected boolean checkpointFirst() {
        return false;
    }

    /**
     * Drops the parts of this clean entry that can be read back from its block when next needed,
     * instead of leaving the cache: true if it dropped any. The evictor calls it with the entry to
     * itself (claimed) and re-measures it after; the entry goes for good when it is next chosen
     * with nothing left to drop. Nothing to drop unless overridden.
     */
    protected boolean shed() {
        return false;
    }

    /**
     * Whether the entry's block holds what the entry holds and no checkpoint owes it an image: what
     * {@link #shed} requires. A moment's view unless the entry is claimed.
     */
    public final boolean clean() {
        return !dirty && !checkpointPending;
    }

    /**
     * How many times the entry was modified since it was made or loaded: two images taken at one
     * count hold the same contents. A moment's view unless the entry is pinned or claimed.
     */
    protected final long modifications() {
        return version;
    }

    /** Logical block number of this entry. */
    public final long blockNumber() {
        return blockNumber;
    }

    /** The codec this entry's block is compressed with when written. */
    public abstract io.betree.compression.BlockCompressor compressor();

    /** Off-heap bytes held now. */
    public abstract long memoryBytes();

    /** Upper bound of the bytes {@link #serialize} writes. */
    public abstract int serializedSizeBound();

    /**
     * Writes the on-disk form into {@code out} (a buffer from the same memory pool that the caller
     * releases). Called with the entry pinned or exclusively owned by the evictor.
     */
    public abstract void serialize(ByteBuf out);

    /**
     * As {@link #serialize}, for the checkpoint image of an entry that changes all the time (a
     * root, {@link #keepResident}): a form quicker to write and slower to read back, which such an
     * image, soon replaced by the block's next version, rarely is. Its size is also bounded by
     * {@link #serializedSizeBound}. The on-disk form unless overridden.
     */
    public void serializeImage(ByteBuf out) {
        serialize(out);
    }

    /** Releases all off-heap memory. Called exactly once, when the entry leaves the cache. */
    protected abstract void releaseMemory();
}
