package io.betree.internal.tree;

import io.netty.buffer.ByteBuf;
import java.nio.ByteBuffer;
import java.util.zip.CRC32C;

/**
 * Where the segments of one stored basement lie: the directory at the front of a segmented
 * basement block ({@link SegmentedBasement}), which a leaf also keeps for each of its basements so
 * that a point read of an uncached basement fetches one segment of a few kilobytes, not the block.
 *
 * <p>A leaf's copy may describe an older version of the block: the block may have been rewritten
 * since. A segment read by a layout is therefore checked before its bytes are used: every segment
 * starts with the write id of the block version it belongs to, a random 64-bit number drawn for
 * each version, and its CRC32C (over the write id and the stored bytes) must match the layout's.
 * A read that fails either check falls back to reading the whole block, which its own checksum
 * guards.
 *
 * <p>Form (big-endian): segment codec id (1), row count (4), write id (8), segment count (2), then
 * per segment its first key (length 2, bytes), row count (4), uncompressed length (4), stored
 * length (4) and CRC32C (4). A segment is stored compressed exactly when its stored length is
 * less than its uncompressed length. Immutable.
 */
final class SegmentLayout {
    /** Bytes before a segment's stored bytes: the write id. */
    static final int SEGMENT_PREFIX = 8;
    private static final int FIXED = 1 + 4 + 8 + 2;
    private static final int PER_SEGMENT = 2 + 4 + 4 + 4 + 4;

    final int codecId;
    final int rowCount;
    final long writeId;
    private final byte[][] firstKeys;
    private final int[] rowCounts;
    private final int[] rawLengths;
    private final int[] storedLengths;
    private final int[] crcs;
    /** Offset of each segment (its write id) from the start of the block's payload. */
    private final int[] offsets;

    SegmentLayout(int codecId, int rowCount, long writeId, byte[][] firstKeys, int[] rowCounts, int[] rawLengths,
            int[] storedLengths, int[] crcs) {
        this.codecId = codecId;
        this.rowCount = rowCount;
        this.writeId = writeId;
        this.firstKeys = firstKeys;
        this.rowCounts = rowCounts;
        this.rawLengths = rawLengths;
        this.storedLengths = storedLengths;
        this.crcs = crcs;
        this.offsets = new int[firstKeys.length];
        int at = 1 + serializedSize(firstKeys);
        for (int s = 0; s < firstKeys.length; s++) {
            offsets[s] = at;
            at += SEGMENT_PREFIX + storedLengths[s];
        }
    }

    /** Bytes of the form for segments with these first keys. */
    static int serializedSize(byte[][] firstKeys) {
        int size = FIXED + firstKeys.length * PER_SEGMENT;
        for (byte[] k : firstKeys) {
            size += k.length;
        }
        return size;
    }

    /**
     * Parses the form from {@code in}, checking every length against {@code payloadBytes}, the
     * size of the block payload the layout describes (or, for a leaf's copy, the largest such).
     *
     * @throws IllegalArgumentException if the form is malformed
     */
    static SegmentLayout read(ByteBuf in, int payloadBytes) {
        int codecId = in.readUnsignedByte();
        int rows = in.readInt();
        long writeId = in.readLong();
        int n = in.readUnsignedShort();
        if (rows < 0 || (n == 0) != (rows == 0) || n > in.readableBytes() / PER_SEGMENT) {
            throw new IllegalArgumentException("impossible segment layout: " + rows + " rows in " + n + " segments");
        }
        byte[][] keys = new byte[n][];
        int[] rowCounts = new int[n];
        int[] raw = new int[n];
        int[] stored = new int[n];
        int[] crcs = new int[n];
        long rowSum = 0;
        long storedSum = 0;
        for (int s = 0; s < n; s++) {
            keys[s] = new byte[in.readUnsignedShort()];
            in.readBytes(keys[s]);
            rowCounts[s] = in.readInt();
            raw[s] = in.readInt();
            stored[s] = in.readInt();
            crcs[s] = in.readInt();
            if (rowCounts[s] < 1 || raw[s] < 0 || stored[s] < 0 || stored[s] > raw[s]) {
                throw new IllegalArgumentException("impossible lengths of segment " + s);
            }
            if (s > 0 && Keys.compare(keys[s - 1], keys[s]) >= 0) {
                throw new IllegalArgumentException("segment first keys out of order");
            }
            rowSum += rowCounts[s];
            storedSum += SEGMENT_PREFIX + (long) stored[s];
        }
        if (rowSum != rows) {
            throw new IllegalArgumentException("segments hold " + rowSum + " rows, the layout says " + rows);
        }
        if (1 + serializedSize(keys) + storedSum > payloadBytes) {
            throw new IllegalArgumentException("segments reach past the block");
        }
        return new SegmentLayout(codecId, rows, writeId, keys, rowCounts, raw, stored, crcs);
    }

    /** Writes the form. */
    void write(ByteBuf out) {
        out.writeByte(codecId).writeInt(rowCount).writeLong(writeId).writeShort(firstKeys.length);
        for (int s = 0; s < firstKeys.length; s++) {
            out.writeShort(firstKeys[s].length).writeBytes(firstKeys[s]);
            out.writeInt(rowCounts[s]).writeInt(rawLengths[s]).writeInt(storedLengths[s]).writeInt(crcs[s]);
        }
    }

    int serializedSize() {
        return serializedSize(firstKeys);
    }

    int segmentCount() {
        return firstKeys.length;
    }

    /** The segment that would hold {@code key}: the last whose first key is not above it, or -1 if all are. */
    int segmentFor(byte[] key) {
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
        return lo - 1;
    }

    /** Offset from the start of the payload of segment {@code s}, its write id first. */
    int offset(int s) {
        return offsets[s];
    }

    /** Bytes segment {@code s} takes in the payload: its write id and its stored bytes. */
    int span(int s) {
        return SEGMENT_PREFIX + storedLengths[s];
    }

    int rawLength(int s) {
        return rawLengths[s];
    }

    int storedLength(int s) {
        return storedLengths[s];
    }

    int rows(int s) {
        return rowCounts[s];
    }

    boolean compressed(int s) {
        return storedLengths[s] < rawLengths[s];
    }

    /** Bytes the whole payload takes: tag, this layout, then every segment. */
    int payloadBytes() {
        int last = firstKeys.length - 1;
        return last < 0 ? 1 + serializedSize() : offsets[last] + span(last);
    }

    /**
     * Whether {@code span}, the {@link #span} bytes of segment {@code s} as read (position to
     * limit), belong to the block version this layout describes and arrived intact.
     */
    boolean matches(int s, ByteBuffer span) {
        if (span.remaining() != span(s) || span.getLong(span.position()) != writeId) {
            return false;
        }
        return crc(span) == crcs[s];
    }

    /** CRC32C of a segment's write id and stored bytes (position to limit; positions unchanged). */
    static int crc(ByteBuffer span) {
        CRC32C crc = new CRC32C();
        crc.update(span.duplicate());
        return (int) crc.getValue();
    }

    /** Heap bytes this layout takes, roughly. */
    long memoryBytes() {
        long bytes = 64 + 6L * 16 + firstKeys.length * (5L * 4 + 16);
        for (byte[] k : firstKeys) {
            bytes += k.length;
        }
        return bytes;
    }
}
