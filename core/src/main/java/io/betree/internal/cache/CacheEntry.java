package io.betree.internal.cache;

import io.netty.buffer.ByteBuf;

/**
 * Something the {@link NodeCache} holds: one block's in-memory form. The object itself is a small
 * heap handle; its contents live in off-heap buffers that it reports through {@link #memoryBytes()}.
 *
 * <p>Fields below are guarded by the cache's lock; contents are guarded by whoever pinned it.
 */
public abstract class CacheEntry {
    /** Logical block number in the environment's block file. */
    private final long blockNumber;
    int pins;
    boolean dirty;
    boolean referenced;
    long accountedBytes;
    /** Position in the cache's clock ring, or -1 when not in the ring. */
    int ringIndex = -1;
    /** Dirty when a checkpoint began and its image for that checkpoint not yet taken. */
    boolean checkpointPending;
    /** Counts modifications, so a write-back can tell whether the entry changed meanwhile. */
    long version;
    /** The evictor is writing an image of this entry (outside the cache lock). */
    boolean writing;

    protected CacheEntry(long blockNumber) {
        this.blockNumber = blockNumber;
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

    /** Releases all off-heap memory. Called exactly once, when the entry leaves the cache. */
    protected abstract void releaseMemory();
}
