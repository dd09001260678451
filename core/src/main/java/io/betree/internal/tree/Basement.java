package io.betree.internal.tree;

import io.betree.compression.BlockCompressor;
import io.betree.internal.cache.CacheEntry;
import io.betree.internal.memory.NodeMemory;
import io.netty.buffer.ByteBuf;

/**
 * A basement node: a sorted run of key/value entries that is one block of its own, so a query reads
 * and caches only the basement it needs rather than the whole leaf.
 *
 * <p>Off-heap layout of {@code data} (also the on-disk form): a 5-byte header (tag {@code 'B'},
 * entry count) followed by entries of key length (2 bytes), value length (4), key, value, in
 * ascending key order. {@code index} holds each entry's offset for binary search.
 */
public final class Basement extends CacheEntry {
    static final byte TAG = 'B';
    private static final int HEADER = 5;
    private static final int ENTRY_HEADER = 6;

    private final NodeMemory memory;
    private final BlockCompressor codec;
    private ByteBuf data;
    private ByteBuf index;
    private int count;

    private Basement(long blockNumber, NodeMemory memory, BlockCompressor codec, ByteBuf data, ByteBuf index, int count) {
        super(blockNumber);
        this.memory = memory;
        this.codec = codec;
        this.data = data;
        this.index = index;
        this.count = count;
    }

    /** A basement with no entries. */
    static Basement empty(long blockNumber, NodeMemory memory, BlockCompressor codec) {
        ByteBuf data = memory.allocate(256);
        data.writeByte(TAG).writeInt(0);
        return new Basement(blockNumber, memory, codec, data, memory.allocate(64), 0);
    }

    /**
     * Takes ownership of {@code data}, a stored basement, and indexes it.
     *
     * @throws IllegalArgumentException if the bytes are not a well-formed basement
     */
    static Basement load(long blockNumber, ByteBuf data, NodeMemory memory, BlockCompressor codec) {
        ByteBuf index = null;
        try {
            if (data.readableBytes() < HEADER || data.getByte(0) != TAG) {
                throw new IllegalArgumentException("not a basement node");
            }
            int n = data.getInt(1);
            if (n < 0 || n > data.readableBytes() / ENTRY_HEADER) {
                throw new IllegalArgumentException("impossible entry count " + n);
            }
            index = memory.allocate(Math.max(4, n * 4));
            int off = HEADER;
            int end = data.writerIndex();
            for (int i = 0; i < n; i++) {
                if (off + ENTRY_HEADER > end) {
                    throw new IllegalArgumentException("entry " + i + " runs past the end");
                }
                int kl = data.getUnsignedShort(off);
                int vl = data.getInt(off + 2);
                if (vl < 0 || (long) off + ENTRY_HEADER + kl + vl > end) {
                    throw new IllegalArgumentException("entry " + i + " has impossible lengths");
                }
                if (i > 0) {
                    int prev = index.getInt((i - 1) * 4);
                    if (Keys.compare(data, prev + ENTRY_HEADER, data.getUnsignedShort(prev), data, off + ENTRY_HEADER, kl) >= 0) {
                        throw new IllegalArgumentException("keys out of order at entry " + i);
                    }
                }
                index.writeInt(off);
                off += ENTRY_HEADER + kl + vl;
            }
            if (off != end) {
                throw new IllegalArgumentException("trailing bytes after the last entry");
            }
            return new Basement(blockNumber, memory, codec, data, index, n);
        } catch (RuntimeException e) {
            memory.release(data);
            memory.release(index);
            throw e;
        }
    }

    /** Number of entries. */
    public int count() {
        return count;
    }

    /** Serialized size in bytes. */
    public int bytes() {
        return data.writerIndex();
    }

    private int offset(int pos) {
        return index.getInt(pos * 4);
    }

    int keyLength(int pos) {
        return data.getUnsignedShort(offset(pos));
    }

    /** Key of entry {@code pos}, copied. */
    public byte[] key(int pos) {
        int off = offset(pos);
        return Keys.copy(data, off + ENTRY_HEADER, data.getUnsignedShort(off));
    }

    /** Value of entry {@code pos}, copied. */
    public byte[] value(int pos) {
        int off = offset(pos);
        int kl = data.getUnsignedShort(off);
        return Keys.copy(data, off + ENTRY_HEADER + kl, data.getInt(off + 2));
    }

    /** Position of {@code key}, or {@code -(insertionPoint) - 1} when absent. */
    public int find(byte[] key) {
        int lo = 0;
        int hi = count - 1;
        while (lo <= hi) {
            int mid = (lo + hi) >>> 1;
            int off = offset(mid);
            int c = Keys.compare(data, off + ENTRY_HEADER, data.getUnsignedShort(off), key);
            if (c < 0) {
                lo = mid + 1;
            } else if (c > 0) {
                hi = mid - 1;
            } else {
                return mid;
            }
        }
        return -(lo + 1);
    }

    /** First position whose key is {@code >= key}. */
    public int lowerBound(byte[] key) {
        int p = find(key);
        return p >= 0 ? p : -p - 1;
    }

    /** Whether {@code key} sorts after every entry (true for an empty basement). */
    boolean isAfterLast(byte[] key) {
        if (count == 0) {
            return true;
        }
        int off = offset(count - 1);
        return Keys.compare(data, off + ENTRY_HEADER, data.getUnsignedShort(off), key) < 0;
    }

    /** Appends an entry whose key sorts after every present key (the sequential-insert path). */
    void appendLast(byte[] key, byte[] value) {
        data = memory.ensureWritable(data, ENTRY_HEADER + key.length + value.length);
        index = memory.ensureWritable(index, 4);
        index.writeInt(data.writerIndex());
        data.writeShort(key.length).writeInt(value.length).writeBytes(key).writeBytes(value);
        count++;
        data.setInt(1, count);
    }

    /**
     * Applies messages {@code [from, to)} of {@code messages}' sorted order; for each key the newest
     * message decides. Rebuilds the entries in one pass.
     */
    void apply(MessageBuffer messages, int from, int to) {
        int extra = 0;
        for (int m = from; m < to; m++) {
            int moff = messages.sortedOffset(m);
            extra += ENTRY_HEADER + messages.keyLength(moff) + messages.valueLength(moff);
        }
        ByteBuf out = memory.allocate(data.writerIndex() + extra);
        ByteBuf outIndex = memory.allocate(Math.max(4, (count + (to - from)) * 4));
        out.writeByte(TAG).writeInt(0);
        int n = 0;
        int e = 0;
        int m = from;
        ByteBuf md = messages.data();
        while (e < count || m < to) {
            int c;
            if (e == count) {
                c = 1;
            } else if (m == to) {
                c = -1;
            } else {
                int eoff = offset(e);
                int moff = messages.sortedOffset(m);
                c = Keys.compare(data, eoff + ENTRY_HEADER, data.getUnsignedShort(eoff),
                        md, moff + MessageBuffer.HEADER, messages.keyLength(moff));
            }
            if (c < 0) {
                int eoff = offset(e++);
                int len = ENTRY_HEADER + data.getUnsignedShort(eoff) + data.getInt(eoff + 2);
                outIndex.writeInt(out.writerIndex());
                out.writeBytes(data, eoff, len);
                n++;
                continue;
            }
            if (c == 0) {
                e++;
            }
            // The last message of a run with equal keys is the newest (sorted by key, then msn).
            int moff = messages.sortedOffset(m);
            while (m + 1 < to && messages.compareKeys(moff, messages.sortedOffset(m + 1)) == 0) {
                moff = messages.sortedOffset(++m);
            }
            m++;
            if (messages.type(moff) == MessageType.PUT) {
                int kl = messages.keyLength(moff);
                int vl = messages.valueLength(moff);
                outIndex.writeInt(out.writerIndex());
                out.writeShort(kl).writeInt(vl);
                out.writeBytes(md, moff + MessageBuffer.HEADER, kl + vl);
                n++;
            }
        }
        out.setInt(1, n);
        memory.release(data);
        memory.release(index);
        data = out;
        index = outIndex;
        count = n;
    }

    /**
     * Moves the entries from position {@code from} on into a new basement with block number
     * {@code blockNumber}, which it returns.
     */
    Basement splitAt(int from, long blockNumber) {
        int start = offset(from);
        int len = data.writerIndex() - start;
        ByteBuf rightData = memory.allocate(HEADER + len);
        rightData.writeByte(TAG).writeInt(count - from);
        rightData.writeBytes(data, start, len);
        ByteBuf rightIndex = memory.allocate(Math.max(4, (count - from) * 4));
        for (int p = from; p < count; p++) {
            rightIndex.writeInt(offset(p) - start + HEADER);
        }
        Basement right = new Basement(blockNumber, memory, codec, rightData, rightIndex, count - from);
        data.writerIndex(start);
        index.writerIndex(from * 4);
        count = from;
        data.setInt(1, count);
        return right;
    }

    /** Position at which splitting leaves about half of the bytes on each side (at least 1 entry left). */
    int splitPosition() {
        int half = data.writerIndex() / 2;
        int lo = 1;
        int hi = count - 1;
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            if (offset(mid) < half) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        return Math.max(1, lo);
    }

    /** Appends all entries of {@code right}, whose keys all sort after this basement's. */
    void absorb(Basement right) {
        int len = right.data.writerIndex() - HEADER;
        data = memory.ensureWritable(data, len);
        index = memory.ensureWritable(index, right.count * 4);
        int base = data.writerIndex() - HEADER;
        for (int p = 0; p < right.count; p++) {
            index.writeInt(right.offset(p) + base);
        }
        data.writeBytes(right.data, HEADER, len);
        count += right.count;
        data.setInt(1, count);
    }

    @Override
    public BlockCompressor compressor() {
        return codec;
    }

    @Override
    public long memoryBytes() {
        return (long) data.capacity() + index.capacity();
    }

    @Override
    public int serializedSizeBound() {
        return data.writerIndex();
    }

    @Override
    public void serialize(ByteBuf out) {
        out.writeBytes(data, 0, data.writerIndex());
    }

    @Override
    protected void releaseMemory() {
        memory.release(data);
        memory.release(index);
        data = null;
        index = null;
    }
}
