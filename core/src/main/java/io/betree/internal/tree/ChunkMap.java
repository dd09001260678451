package io.betree.internal.tree;

import io.netty.buffer.ByteBuf;

/**
 * Where the chunks of one stored version of a basement lie in its block, and the first key of each,
 * so that a point read can fetch and decompress the one chunk that may hold its key instead of the
 * whole basement ({@link StoredBasement}). A leaf keeps one per basement ({@link Slot}).
 *
 * <p>A map is a hint, never trusted: the {@link #stamp} it carries seeds each chunk's checksum, and
 * a stored version written later has another stamp, so a read through a map that no longer
 * describes the block finds a checksum mismatch and reads the whole basement instead.
 *
 * <p>Immutable and thread-safe.
 */
final class ChunkMap {
    /** The answer of a chunk read whose map no longer describes the block. */
    static final byte[] STALE = new byte[0];

    final int codecId;
    final long stamp;
    /** Offset in the stored payload of each chunk record, then the payload's length: chunk count + 1 entries. */
    private final int[] starts;
    /** The first key of chunks 1 and on. */
    private final byte[][] firstKeys;

    ChunkMap(int codecId, long stamp, int[] starts, byte[][] firstKeys) {
        if (starts.length < 2 || firstKeys.length != starts.length - 2) {
            throw new IllegalArgumentException("a chunk map needs a start per chunk, an end and a key per later chunk");
        }
        this.codecId = codecId;
        this.stamp = stamp;
        this.starts = starts;
        this.firstKeys = firstKeys;
    }

    int chunkCount() {
        return starts.length - 1;
    }

    /** Offset of chunk {@code c}'s record in the stored payload. */
    int start(int c) {
        return starts[c];
    }

    /** Length of chunk {@code c}'s record (header included). */
    int length(int c) {
        return starts[c + 1] - starts[c];
    }

    /** The chunk whose rows would hold {@code key}: the last one whose first key is at most {@code key}. */
    int chunkFor(byte[] key) {
        int lo = 0;
        int hi = firstKeys.length;
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            if (Keys.compare(firstKeys[mid], key) <= 0) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        return lo;
    }

    /** An estimate of the heap this map holds. */
    long memoryBytes() {
        long bytes = 64 + 16 + 4L * starts.length + 16 + 8L * firstKeys.length;
        for (byte[] k : firstKeys) {
            bytes += 16 + k.length;
        }
        return bytes;
    }

    /** Bytes {@link #write} produces. */
    int serializedSize() {
        int size = 1 + 8 + 2 + 4 * starts.length;
        for (byte[] k : firstKeys) {
            size += 2 + k.length;
        }
        return size;
    }

    /** Writes codec id (1), stamp (8), chunk count m (2), m + 1 starts (4 each), m - 1 keys (length 2, bytes). */
    void write(ByteBuf out) {
        out.writeByte(codecId).writeLong(stamp).writeShort(chunkCount());
        for (int s : starts) {
            out.writeInt(s);
        }
        for (byte[] k : firstKeys) {
            out.writeShort(k.length).writeBytes(k);
        }
    }

    /**
     * Reads what {@link #write} wrote.
     *
     * @throws IllegalArgumentException if the bytes cannot be a map (counts, starts out of order, keys out of order)
     */
    static ChunkMap read(ByteBuf in) {
        int codecId = in.readUnsignedByte();
        long stamp = in.readLong();
        int m = in.readUnsignedShort();
        if (m < 1 || m > in.readableBytes() / 6) {
            throw new IllegalArgumentException("impossible chunk count " + m);
        }
        int[] starts = new int[m + 1];
        for (int i = 0; i <= m; i++) {
            starts[i] = in.readInt();
            if (starts[i] < 0 || i > 0 && starts[i] <= starts[i - 1]) {
                throw new IllegalArgumentException("chunk starts out of order");
            }
        }
        byte[][] keys = new byte[m - 1][];
        for (int i = 0; i < m - 1; i++) {
            keys[i] = new byte[in.readUnsignedShort()];
            in.readBytes(keys[i]);
            if (i > 0 && Keys.compare(keys[i - 1], keys[i]) >= 0) {
                throw new IllegalArgumentException("chunk keys out of order");
            }
        }
        return new ChunkMap(codecId, stamp, starts, keys);
    }

    /**
     * A leaf's place for the map of one of its basements. The basement, once pinned through the
     * leaf, publishes the map of each version it stores here ({@link Basement#attach}), without
     * pinning or changing the leaf: the leaf writes whatever map its slot holds when it is next
     * written.
     */
    static final class Slot {
        private volatile ChunkMap map;

        Slot(ChunkMap map) {
            this.map = map;
        }

        ChunkMap map() {
            return map;
        }

        void set(ChunkMap map) {
            this.map = map;
        }
    }
}
