package io.betree.internal.tree;

import io.betree.compression.BlockCompressor;
import io.betree.internal.cache.CacheEntry;
import io.betree.internal.memory.NodeMemory;
import io.netty.buffer.ByteBuf;
import java.util.ArrayList;
import java.util.List;

/**
 * An internal node: children, the pivot keys between them, and one {@link MessageBuffer} per child
 * holding messages not yet flushed to that child. Every message in a buffer is newer than any
 * message or entry below it for the same key.
 *
 * <p>On-disk form: tag {@code 'I'}, height (1 byte), child count n (4 bytes), n child block numbers
 * (8 each), n-1 pivots as key length (2) and key bytes, then per child the byte length (4) of its
 * buffer followed by its messages in (key, msn) order. Child {@code i} holds keys
 * {@code k} with {@code pivot[i-1] <= k < pivot[i]}.
 */
final class InternalNode extends CacheEntry {
    static final byte TAG = 'I';

    private final BlockCompressor codec;
    final int height;
    final List<byte[]> pivots;
    final List<Long> children;
    final List<MessageBuffer> buffers;

    InternalNode(long blockNumber, BlockCompressor codec, int height, List<byte[]> pivots, List<Long> children,
            List<MessageBuffer> buffers) {
        super(blockNumber);
        this.codec = codec;
        this.height = height;
        this.pivots = pivots;
        this.children = children;
        this.buffers = buffers;
    }

    /** Index of the child whose key range holds {@code key} among {@code pivots}. */
    static int route(List<byte[]> pivots, byte[] key) {
        int lo = 0;
        int hi = pivots.size();
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            if (Keys.compare(pivots.get(mid), key) <= 0) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        return lo;
    }

    /** Index of the child whose key range holds {@code key}. */
    int childFor(byte[] key) {
        return route(pivots, key);
    }

    /** Parses a stored internal node; throws on malformed bytes (reported as corruption by the caller). */
    static InternalNode read(long blockNumber, ByteBuf in, BlockCompressor codec, NodeMemory memory) {
        if (in.readByte() != TAG) {
            throw new IllegalArgumentException("not an internal node");
        }
        int height = in.readUnsignedByte();
        int n = in.readInt();
        if (height < 1 || n < 1 || n > in.readableBytes() / 12) {
            throw new IllegalArgumentException("impossible height " + height + " or child count " + n);
        }
        List<Long> children = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            children.add(in.readLong());
        }
        List<byte[]> pivots = new ArrayList<>(n - 1);
        for (int i = 0; i < n - 1; i++) {
            byte[] k = new byte[in.readUnsignedShort()];
            in.readBytes(k);
            pivots.add(k);
        }
        List<MessageBuffer> buffers = new ArrayList<>(n);
        try {
            for (int i = 0; i < n; i++) {
                buffers.add(MessageBuffer.read(memory, in, in.readInt()));
            }
            if (in.isReadable()) {
                throw new IllegalArgumentException("trailing bytes after internal node");
            }
        } catch (RuntimeException e) {
            buffers.forEach(MessageBuffer::release);
            throw e;
        }
        return new InternalNode(blockNumber, codec, height, pivots, children, buffers);
    }

    /** Bytes of all buffered messages. */
    long bufferedBytes() {
        long sum = 0;
        for (MessageBuffer b : buffers) {
            sum += b.bytes();
        }
        return sum;
    }

    /** Serialized size, the figure compared against the node size. */
    long size() {
        return size(bufferedBytes());
    }

    /** {@link #size()}, given {@link #bufferedBytes()}. */
    long size(long bufferedBytes) {
        long size = 6 + children.size() * 12L + bufferedBytes;
        for (byte[] p : pivots) {
            size += 2 + p.length;
        }
        return size;
    }

    /** Index of the child with the most buffered bytes. */
    int heaviestChild() {
        int best = 0;
        for (int i = 1; i < buffers.size(); i++) {
            if (buffers.get(i).bytes() > buffers.get(best).bytes()) {
                best = i;
            }
        }
        return best;
    }

    /**
     * Two: in a 16-writer time series whose internal nodes all fit in the cache, a fifth of a
     * flusher's time went to reading back the ones the clock had evicted for basements.
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
        long sum = 64;
        for (MessageBuffer b : buffers) {
            sum += b.memoryBytes();
        }
        return sum;
    }

    @Override
    public int serializedSizeBound() {
        long size = size();
        if (size > Integer.MAX_VALUE - 64) {
            throw new IllegalStateException("internal node " + blockNumber() + " is larger than 2 GiB");
        }
        return (int) size;
    }

    @Override
    public void serialize(ByteBuf out) {
        serialize(out, true);
    }

    /**
     * Buffers in arrival order, one copy each: a root's image taken for a checkpoint on a writer's
     * path (under the root latch) took tens of milliseconds to merge its buffers' runs message by
     * message, and other writers waited it out. A load sorts them.
     */
    @Override
    public void serializeImage(ByteBuf out) {
        serialize(out, false);
    }

    private void serialize(ByteBuf out, boolean sorted) {
        out.writeByte(TAG).writeByte(height).writeInt(children.size());
        for (long c : children) {
            out.writeLong(c);
        }
        for (byte[] p : pivots) {
            out.writeShort(p.length).writeBytes(p);
        }
        for (MessageBuffer b : buffers) {
            out.writeInt(b.bytes());
            if (sorted) {
                b.serialize(out);
            } else {
                b.serializeInArrivalOrder(out);
            }
        }
    }

    @Override
    protected void releaseMemory() {
        buffers.forEach(MessageBuffer::release);
    }
}
