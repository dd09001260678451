package io.betree.internal.cache;

import io.betree.compression.BlockCompressor;
import io.netty.buffer.ByteBuf;

/**
 * Where the {@link NodeCache}'s entries come from and where dirty ones go: the cache's fetch and
 * write-back callbacks, and its only view of storage. The cache decides when to read and write;
 * the store decides how and where.
 *
 * <p>Implementations are thread-safe: the cache calls them from readers, writers and its evictor at
 * once, never with its own lock held. They report failures with the exceptions of
 * {@link io.betree.internal.fault}.
 */
public interface BackingStore {
    /**
     * Reads block {@code blockNumber} into a fresh buffer of the cache's memory, its readable
     * bytes the block's contents; the caller owns the buffer.
     *
     * @throws io.betree.internal.fault.CorruptionException if the block is damaged or does not exist
     * @throws io.betree.internal.fault.BetreeIOException if reading fails
     */
    ByteBuf fetch(long blockNumber);

    /**
     * The first {@code bytes} of block {@code blockNumber}'s contents, or all of them, into a fresh
     * buffer the caller owns: exactly those bytes when the store can read a part of the block (one
     * stored uncompressed and longer), unchecked by the block's own checksum, which covers it
     * whole; otherwise the whole block, as {@link #fetch} reads it, which may be shorter or longer
     * (a buffer of exactly {@code bytes} may be either). A store that cannot read parts returns the
     * whole block, as this default does. The caller checks what it uses of a part.
     *
     * @throws io.betree.internal.fault.CorruptionException if the block is damaged or does not exist
     * @throws io.betree.internal.fault.BetreeIOException if reading fails
     */
    default ByteBuf fetchPrefix(long blockNumber, int bytes) {
        return fetch(blockNumber);
    }

    /**
     * Bytes {@code [from, from + length)} of block {@code blockNumber}'s contents as stored, into a
     * buffer the caller owns, unchecked: for a block stored uncompressed, whose parts carry
     * checksums of their own that the caller checks. The buffer's readable bytes are the range, or
     * none when the range does not lie inside the block. A store that cannot read parts reads the
     * block whole, as this default does, and marks the range in it.
     *
     * @throws io.betree.internal.fault.CorruptionException if the block does not exist, or (read
     *     whole) is damaged
     * @throws io.betree.internal.fault.BetreeIOException if reading fails
     */
    default ByteBuf fetchRange(long blockNumber, int from, int length) {
        ByteBuf whole = fetch(blockNumber);
        int start = whole.readerIndex();
        boolean inside = from >= 0 && length >= 0 && (long) from + length <= whole.readableBytes();
        return inside ? whole.setIndex(start + from, start + from + length) : whole.setIndex(start, start);
    }

    /**
     * Stores {@code image} (readable bytes, not consumed; the caller releases it) as the current
     * version of {@code blockNumber}, compressed with {@code codec}.
     *
     * @throws io.betree.internal.fault.BetreeIOException if writing fails; the block keeps its
     *     previous version
     */
    void writeBack(long blockNumber, ByteBuf image, BlockCompressor codec);

    /**
     * Stores {@code image} as the block's image in the checkpoint in progress (its contents when
     * that checkpoint began); otherwise as {@link #writeBack}. Returns whether the image became the
     * block's current version as well. It does not when the block was written since the checkpoint
     * began; that version may be older than the image (an earlier state whose write ended after
     * the begin), so the cache keeps the entry dirty and writes it again.
     */
    boolean writeCheckpointImage(long blockNumber, ByteBuf image, BlockCompressor codec);

    /** A short name for thread names and messages (the file's name, say). */
    String name();
}
