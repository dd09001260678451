package io.betree.internal.tree;

import io.netty.buffer.ByteBuf;
import java.util.Arrays;

/**
 * Where the chunks of one stored version of a basement lie in its block, and a separator key before
 * each chunk after the first, so that a point read can fetch and decompress the one chunk that may
 * hold its key instead of the whole basement ({@link StoredBasement}). A leaf keeps one per basement
 * ({@link Slot}). A separator is greater than every key of the chunks before it and at most the
 * first key of its own: the shortest such prefix of that first key.
 *
 * <p>A map is a hint, never trusted: the {@link #stamp} it carries seeds each chunk's checksum, and
 * a stored version written later has another stamp, so a read through a map that no longer
 * describes the block finds a checksum mismatch and reads the whole basement instead.
 *
 * <p>Two arrays hold it all, as a leaf keeps one for each of its basements: some 250 bytes for a
 * basement of 16 chunks. Immutable and thread-safe.
 */
final class ChunkMap {
    /** The answer of a chunk read whose map no longer describes the block. */
    static final byte[] STALE = new byte[0];
    /** The largest stored payload of a block, which no chunk offset may pass. */
    private static final int MAX_PAYLOAD = io.betree.internal.storage.BlockFile.MAX_BLOCK_SIZE;

    final int codecId;
    final long stamp;
    /**
     * The offset in the stored payload of each chunk record and then the payload's length (chunk
     * count + 1 entries), followed by the end of each separator in {@link #separators}.
     */
    private final int[] ints;
    /** The separators of chunks 1 and on, one after another. */
    private final byte[] separators;

    /**
     * A map of {@code starts.length - 1} chunks whose records start at {@code starts} (the last entry
     * is the payload's length), with {@code separators[c - 1]} before chunk {@code c}.
     */
    ChunkMap(int codecId, long stamp, int[] starts, byte[][] separators) {
        int m = starts.length - 1;
        if (m < 1 || separators.length != m - 1) {
            throw new IllegalArgumentException("a chunk map needs a start per chunk, an end and a key per later chunk");
        }
        this.codecId = codecId;
        this.stamp = stamp;
        this.ints = Arrays.copyOf(starts, 2 * m);
        int total = 0;
        for (int c = 0; c < m - 1; c++) {
            total += separators[c].length;
            ints[m + 1 + c] = total;
        }
        this.separators = new byte[total];
        for (int c = 0, at = 0; c < m - 1; c++) {
            System.arraycopy(separators[c], 0, this.separators, at, separators[c].length);
            at += separators[c].length;
        }
    }

    int chunkCount() {
        return ints.length / 2;
    }

    /** Offset of chunk {@code c}'s record in the stored payload. */
    int start(int c) {
        return ints[c];
    }

    /** Length of chunk {@code c}'s record (header included). */
    int length(int c) {
        return ints[c + 1] - ints[c];
    }

    private int separatorStart(int s) {
        return s == 0 ? 0 : ints[chunkCount() + s];
    }

    private int separatorEnd(int s) {
        return ints[chunkCount() + 1 + s];
    }

    /** The chunk whose rows would hold {@code key}: the last one whose separator is at most {@code key}. */
    int chunkFor(byte[] key) {
        int lo = 0;
        int hi = chunkCount() - 1;
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            if (Arrays.compareUnsigned(separators, separatorStart(mid), separatorEnd(mid), key, 0,
                    key.length) <= 0) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        return lo;
    }

    /** An estimate of the heap this map holds. */
    long memoryBytes() {
        return 40 + 16 + 4L * ints.length + 16 + separators.length;
    }

    /** Bytes {@link #write} produces. */
    int serializedSize() {
        return 1 + 8 + 2 + 4 * (chunkCount() + 1) + 2 * (chunkCount() - 1) + separators.length;
    }

    /** Writes codec id (1), stamp (8), chunk count m (2), m + 1 starts (4 each), m - 1 separators (length 2, bytes). */
    void write(ByteBuf out) {
        int m = chunkCount();
        out.writeByte(codecId).writeLong(stamp).writeShort(m);
        for (int c = 0; c <= m; c++) {
            out.writeInt(ints[c]);
        }
        for (int s = 0; s < m - 1; s++) {
            out.writeShort(separatorEnd(s) - separatorStart(s)).writeBytes(separators, separatorStart(s),
                    separatorEnd(s) - separatorStart(s));
        }
    }

    /**
     * Reads what {@link #write} wrote.
     *
     * @throws IllegalArgumentException if the bytes cannot be a map (counts, starts or separators out of order)
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
            if (starts[i] < 0 || starts[i] > MAX_PAYLOAD || i > 0 && starts[i] <= starts[i - 1]) {
                throw new IllegalArgumentException("chunk starts out of order or beyond any block");
            }
        }
        byte[][] keys = new byte[m - 1][];
        for (int i = 0; i < m - 1; i++) {
            keys[i] = new byte[in.readUnsignedShort()];
            in.readBytes(keys[i]);
            if (i > 0 && Keys.compare(keys[i - 1], keys[i]) >= 0) {
                throw new IllegalArgumentException("chunk separators out of order");
            }
        }
        return new ChunkMap(codecId, stamp, starts, keys);
    }

    /**
     * Moves {@code in} past a map {@link #write} wrote, checking its counts and lengths.
     *
     * @throws IllegalArgumentException or IndexOutOfBoundsException if the bytes cannot be a map
     */
    static void skip(ByteBuf in) {
        in.skipBytes(9);
        int m = in.readUnsignedShort();
        if (m < 1 || m > in.readableBytes() / 6) {
            throw new IllegalArgumentException("impossible chunk count " + m);
        }
        in.skipBytes(4 * (m + 1));
        for (int i = 0; i < m - 1; i++) {
            in.skipBytes(in.readUnsignedShort());
        }
    }

    /**
     * The shortest prefix of {@code first} that sorts after {@code last}, which sorts before
     * {@code first}: a separator between two chunks.
     */
    static byte[] separator(byte[] last, byte[] first) {
        int n = Arrays.mismatch(last, first);
        return Arrays.copyOf(first, Math.min(first.length, n + 1));
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
