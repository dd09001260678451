package io.betree.internal.tree;

import io.betree.compression.BlockCompressor;
import io.betree.internal.cache.CacheEntry;
import io.netty.buffer.ByteBuf;
import java.util.ArrayList;
import java.util.List;

/**
 * A leaf: the ordered list of its basements (block numbers and sizes) and the pivot keys between
 * them. The entries themselves live in the {@link Basement} blocks, which are cached on their own.
 *
 * <p>On-disk form: tag {@code 'L'}, basement count (4 bytes), per basement its block number (8) and
 * size (4), then count-1 pivots as key length (2) and key bytes. Pivot {@code i} is the smallest key
 * that basement {@code i+1} may hold.
 */
final class LeafNode extends CacheEntry {
    static final byte TAG = 'L';

    private final BlockCompressor codec;
    final List<byte[]> pivots;
    final List<Long> basements;
    final List<Integer> basementBytes;

    LeafNode(long blockNumber, BlockCompressor codec, List<byte[]> pivots, List<Long> basements, List<Integer> sizes) {
        super(blockNumber);
        this.codec = codec;
        this.pivots = pivots;
        this.basements = basements;
        this.basementBytes = sizes;
    }

    /** Parses a stored leaf; throws {@link IllegalArgumentException} or IndexOutOfBounds on bad bytes. */
    static LeafNode read(long blockNumber, ByteBuf in, BlockCompressor codec) {
        if (in.readByte() != TAG) {
            throw new IllegalArgumentException("not a leaf node");
        }
        int n = in.readInt();
        if (n < 1 || n > in.readableBytes() / 12) {
            throw new IllegalArgumentException("impossible basement count " + n);
        }
        List<Long> blocks = new ArrayList<>(n);
        List<Integer> sizes = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            blocks.add(in.readLong());
            sizes.add(in.readInt());
        }
        List<byte[]> pivots = new ArrayList<>(n - 1);
        for (int i = 0; i < n - 1; i++) {
            byte[] k = new byte[in.readUnsignedShort()];
            in.readBytes(k);
            if (i > 0 && Keys.compare(pivots.get(i - 1), k) >= 0) {
                throw new IllegalArgumentException("leaf pivots out of order");
            }
            pivots.add(k);
        }
        if (in.isReadable()) {
            throw new IllegalArgumentException("trailing bytes after leaf node");
        }
        return new LeafNode(blockNumber, codec, pivots, blocks, sizes);
    }

    /** Index of the basement that holds {@code key}. */
    int basementFor(byte[] key) {
        return InternalNode.route(pivots, key);
    }

    /** Total bytes of all basements. */
    long totalBytes() {
        long sum = 0;
        for (int b : basementBytes) {
            sum += b;
        }
        return sum;
    }

    @Override
    public BlockCompressor compressor() {
        return codec;
    }

    @Override
    public long memoryBytes() {
        return 64;
    }

    @Override
    public int serializedSizeBound() {
        int size = 5 + basements.size() * 12;
        for (byte[] p : pivots) {
            size += 2 + p.length;
        }
        return size;
    }

    @Override
    public void serialize(ByteBuf out) {
        out.writeByte(TAG).writeInt(basements.size());
        for (int i = 0; i < basements.size(); i++) {
            out.writeLong(basements.get(i)).writeInt(basementBytes.get(i));
        }
        for (byte[] p : pivots) {
            out.writeShort(p.length).writeBytes(p);
        }
    }

    @Override
    protected void releaseMemory() {
        // Only heap state.
    }
}
