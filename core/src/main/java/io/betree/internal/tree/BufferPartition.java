package io.betree.internal.tree;

import io.betree.compression.BlockCompressor;
import io.betree.internal.cache.CacheEntry;
import io.betree.internal.memory.NodeMemory;
import io.netty.buffer.ByteBuf;

/**
 * The message buffer of one child of an internal node, stored, cached, fetched and evicted on its
 * own: a node keeps only its pivots, its children's block numbers and its buffers' block numbers
 * and sizes, so that a read fetches the one buffer on its path, the cache drops cold buffers
 * before whole nodes, and a flush rewrites the buffers it changed, not the node's megabytes.
 *
 * <p>On-disk form: tag {@code 'M'}, then the messages sorted by (key, msn), or, in the checkpoint
 * image of a buffer kept resident (a root's), in arrival order; a load sorts them.
 *
 * <p>Guarded, like the node it belongs to, by whoever holds that node; the pin keeps it cached.
 */
final class BufferPartition extends CacheEntry {
    static final byte TAG = 'M';

    private final BlockCompressor codec;
    private MessageBuffer buffer;

    BufferPartition(long blockNumber, BlockCompressor codec, MessageBuffer buffer) {
        super(blockNumber);
        this.codec = codec;
        this.buffer = buffer;
    }

    /** An empty partition. */
    static BufferPartition empty(long blockNumber, BlockCompressor codec, NodeMemory memory) {
        return new BufferPartition(blockNumber, codec, new MessageBuffer(memory));
    }

    /** Parses a stored partition; throws {@link IllegalArgumentException} or IndexOutOfBounds on bad bytes. */
    static BufferPartition read(long blockNumber, ByteBuf in, BlockCompressor codec, NodeMemory memory) {
        if (in.readByte() != TAG) {
            throw new IllegalArgumentException("not a message buffer");
        }
        return new BufferPartition(blockNumber, codec, MessageBuffer.read(memory, in, in.readableBytes()));
    }

    /** The messages; valid until the next {@link #replace}. */
    MessageBuffer buffer() {
        return buffer;
    }

    /**
     * Puts {@code next} in the current buffer's place and returns the current one, now the caller's;
     * a null {@code next} only for a partition about to be freed.
     */
    MessageBuffer replace(MessageBuffer next) {
        MessageBuffer taken = buffer;
        buffer = next;
        return taken;
    }

    /** Bytes of the messages, the figure the node records for this child. */
    int bytes() {
        return buffer.bytes();
    }

    /**
     * As many as an internal node's, whose part buffers were until they became blocks of their own:
     * a buffer evicted is read back whole by the next flush into it and by every read on its path,
     * and the clock should drop the basements that reads pass through first. (20,000 cold point
     * reads of a 30 M-row iiBench under a 128 MiB cache: 6.7 s with none, 5.4 s with two; one run
     * each.)
     */
    @Override
    protected int extraSweeps() {
        return 2;
    }

    @Override
    public BlockCompressor compressor() {
        return codec;
    }

    @Override
    public long memoryBytes() {
        return 48 + (buffer == null ? 0 : buffer.memoryBytes());
    }

    @Override
    public int serializedSizeBound() {
        return 1 + buffer.bytes();
    }

    @Override
    public void serialize(ByteBuf out) {
        out.writeByte(TAG);
        buffer.serialize(out);
    }

    /**
     * Messages in arrival order, one copy: a root's buffers are imaged for a checkpoint on a
     * writer's path (under the root latch), where merging their runs message by message took tens
     * of milliseconds that other writers waited out. A load sorts them.
     */
    @Override
    public void serializeImage(ByteBuf out) {
        out.writeByte(TAG);
        buffer.serializeInArrivalOrder(out);
    }

    @Override
    protected void releaseMemory() {
        if (buffer != null) {
            buffer.release();
        }
    }
}
