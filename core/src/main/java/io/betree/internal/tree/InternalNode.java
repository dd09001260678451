package io.betree.internal.tree;

import io.betree.compression.BlockCompressor;
import io.betree.internal.cache.CacheEntry;
import io.netty.buffer.ByteBuf;
import java.util.ArrayList;
import java.util.List;

/**
 * An internal node: children, the pivot keys between them, and per child a {@link BufferPartition}
 * holding the messages not yet flushed to that child, stored as a block of its own. The node records
 * each partition's block number and size, so that sizes and flush choices need no partition in
 * memory, and a read pins only the partition on its path ({@link NodeStore#pinBuffer}). Every
 * message in a buffer is newer than any message or entry below it for the same key.
 *
 * <p>Whoever changes a partition holds this node pinned and records the partition's new size here
 * ({@link #noteBytes}) before unpinning both, modified: so a stored node's sizes are those of its
 * stored partitions. Below the root an empty buffer has no block ({@link #NO_BLOCK}): its block is
 * freed when a flush empties it and allocated when messages arrive again, so every stored
 * partition holds messages and nothing is stored that no read needs. A root keeps the blocks of
 * its emptied buffers, whose reserved room writers refill.
 *
 * <p>On-disk form: tag {@code 'I'}, height (1 byte), child count n (4 bytes), per child its block
 * number (8), its partition's block number (8; -1 for none) and the partition's message bytes (4), then n-1
 * pivots as key length (2) and key bytes. Child {@code i} holds keys {@code k} with
 * {@code pivot[i-1] <= k < pivot[i]}.
 */
final class InternalNode extends CacheEntry {
    static final byte TAG = 'I';
    /** Stored bytes per child: block number, partition block number, partition bytes. */
    private static final int PER_CHILD = 20;
    /** The partition block number of an empty buffer that has no block. */
    static final long NO_BLOCK = -1;

    private final BlockCompressor codec;
    final int height;
    final List<byte[]> pivots;
    final List<Long> children;
    /** Block numbers of the children's buffer partitions. */
    final List<Long> partitions;
    /** Message bytes of each partition, as last recorded. */
    final List<Integer> bufferBytes;

    InternalNode(long blockNumber, BlockCompressor codec, int height, List<byte[]> pivots, List<Long> children,
            List<Long> partitions, List<Integer> bufferBytes) {
        super(blockNumber);
        this.codec = codec;
        this.height = height;
        this.pivots = pivots;
        this.children = children;
        this.partitions = partitions;
        this.bufferBytes = bufferBytes;
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
    static InternalNode read(long blockNumber, ByteBuf in, BlockCompressor codec) {
        if (in.readByte() != TAG) {
            throw new IllegalArgumentException("not an internal node");
        }
        int height = in.readUnsignedByte();
        int n = in.readInt();
        if (height < 1 || n < 1 || n > in.readableBytes() / PER_CHILD) {
            throw new IllegalArgumentException("impossible height " + height + " or child count " + n);
        }
        List<Long> children = new ArrayList<>(n);
        List<Long> partitions = new ArrayList<>(n);
        List<Integer> bytes = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            children.add(in.readLong());
            long partition = in.readLong();
            int b = in.readInt();
            if (b < 0) {
                throw new IllegalArgumentException("negative size " + b + " of message buffer " + i);
            }
            if (partition < NO_BLOCK || (partition == NO_BLOCK && b > 0)) {
                throw new IllegalArgumentException("message buffer " + i + " of " + b + " bytes has block " + partition);
            }
            partitions.add(partition);
            bytes.add(b);
        }
        List<byte[]> pivots = new ArrayList<>(n - 1);
        for (int i = 0; i < n - 1; i++) {
            byte[] k = new byte[in.readUnsignedShort()];
            in.readBytes(k);
            pivots.add(k);
        }
        if (in.isReadable()) {
            throw new IllegalArgumentException("trailing bytes after internal node");
        }
        return new InternalNode(blockNumber, codec, height, pivots, children, partitions, bytes);
    }

    /** Records that partition {@code i} now holds {@code bytes} bytes of messages. */
    void noteBytes(int i, int bytes) {
        bufferBytes.set(i, bytes);
    }

    /** Bytes of all buffered messages. */
    long bufferedBytes() {
        long sum = 0;
        for (int b : bufferBytes) {
            sum += b;
        }
        return sum;
    }

    /** The node's logical size, its own block and its partitions', compared against the node size. */
    long size() {
        return size(bufferedBytes());
    }

    /** {@link #size()}, given {@link #bufferedBytes()}. */
    long size(long bufferedBytes) {
        return ownBytes() + bufferedBytes;
    }

    /** Bytes of this node's own block: pivots and per-child records. */
    private int ownBytes() {
        int size = 6 + children.size() * PER_CHILD;
        for (byte[] p : pivots) {
            size += 2 + p.length;
        }
        return size;
    }

    /** Index of the child with the most buffered bytes. */
    int heaviestChild() {
        int best = 0;
        for (int i = 1; i < bufferBytes.size(); i++) {
            if (bufferBytes.get(i) > bufferBytes.get(best)) {
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
        return 64L + ownBytes();
    }

    @Override
    public int serializedSizeBound() {
        return ownBytes();
    }

    @Override
    public void serialize(ByteBuf out) {
        out.writeByte(TAG).writeByte(height).writeInt(children.size());
        for (int i = 0; i < children.size(); i++) {
            out.writeLong(children.get(i)).writeLong(partitions.get(i)).writeInt(bufferBytes.get(i));
        }
        for (byte[] p : pivots) {
            out.writeShort(p.length).writeBytes(p);
        }
    }

    @Override
    protected void releaseMemory() {
        // Only heap state; the partitions are entries of their own.
    }
}
