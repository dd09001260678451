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
 * less than its uncompressed length. Immutable; held as that form, which a leaf keeps for each of
 * its basements, and walked when read (a few dozen segments at most).
 */
final class SegmentLayout {
    /** Bytes before a segment's stored bytes: the write id. */
    static final int SEGMENT_PREFIX = 8;
    private static final int FIXED = 1 + 4 + 8 + 2;
    private static final int PER_SEGMENT = 2 + 4 + 4 + 4 + 4;

    final int codecId;
    final int rowCount;
    final long writeId;
    /** The form above. */
    private final byte[] form;
    private final int segments;

    private SegmentLayout(byte[] form) {
        ByteBuffer b = ByteBuffer.wrap(form);
        this.form = form;
        this.codecId = b.get(0) & 0xff;
        this.rowCount = b.getInt(1);
        this.writeId = b.getLong(5);
        this.segments = b.getShort(13) & 0xffff;
    }

    /** The layout of segments with these first keys and figures. */
    static SegmentLayout of(int codecId, int rowCount, long writeId, byte[][] firstKeys, int[] rowCounts,
            int[] rawLengths, int[] storedLengths, int[] crcs) {
        ByteBuffer b = ByteBuffer.allocate(serializedSize(firstKeys));
        b.put((byte) codecId).putInt(rowCount).putLong(writeId).putShort((short) firstKeys.length);
        for (int s = 0; s < firstKeys.length; s++) {
            b.putShort((short) firstKeys[s].length).put(firstKeys[s]);
            b.putInt(rowCounts[s]).putInt(rawLengths[s]).putInt(storedLengths[s]).putInt(crcs[s]);
        }
        return new SegmentLayout(b.array());
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
        int start = in.readerIndex();
        in.skipBytes(1);
        int rows = in.readInt();
        in.skipBytes(8);
        int n = in.readUnsignedShort();
        if (rows < 0 || (n == 0) != (rows == 0) || n > in.readableBytes() / PER_SEGMENT) {
            throw new IllegalArgumentException("impossible segment layout: " + rows + " rows in " + n + " segments");
        }
        byte[] previous = null;
        long rowSum = 0;
        long end = 0;
        for (int s = 0; s < n; s++) {
            byte[] key = new byte[in.readUnsignedShort()];
            in.readBytes(key);
            int segmentRows = in.readInt();
            int raw = in.readInt();
            int stored = in.readInt();
            in.skipBytes(4);
            if (segmentRows < 1 || raw < 0 || stored < 0 || stored > raw) {
                throw new IllegalArgumentException("impossible lengths of segment " + s);
            }
            if (previous != null && Keys.compare(previous, key) >= 0) {
                throw new IllegalArgumentException("segment first keys out of order");
            }
            previous = key;
            rowSum += segmentRows;
            end += SEGMENT_PREFIX + (long) stored;
        }
        if (rowSum != rows) {
            throw new IllegalArgumentException("segments hold " + rowSum + " rows, the layout says " + rows);
        }
        byte[] form = new byte[in.readerIndex() - start];
        in.getBytes(start, form);
        if (1 + form.length + end > payloadBytes) {
            throw new IllegalArgumentException("segments reach past the block");
        }
        return new SegmentLayout(form);
    }

    /**
     * The form at {@code at} in {@code buf} ({@link #skip} passed over it), copied and checked.
     *
     * @throws IllegalArgumentException if the form is malformed
     */
    static SegmentLayout copy(ByteBuf buf, int at) {
        return read(buf.duplicate().readerIndex(at), Integer.MAX_VALUE);
    }

    /**
     * Moves {@code in} past a form, checking only that it lies within {@code in}: a leaf read by the
     * thousand a second passes over its basements' layouts, and {@link #copy} checks one when used.
     *
     * @throws IndexOutOfBoundsException if the form runs past the end
     */
    static void skip(ByteBuf in) {
        in.skipBytes(13);
        int n = in.readUnsignedShort();
        for (int s = 0; s < n; s++) {
            in.skipBytes(in.readUnsignedShort() + 16);
        }
    }

    /** The length of the form (well formed: {@link #read} accepted it) at {@code at} in {@code buf}. */
    static int length(ByteBuf buf, int at) {
        int n = buf.getUnsignedShort(at + 13);
        int end = at + FIXED;
        for (int s = 0; s < n; s++) {
            end += 2 + buf.getUnsignedShort(end) + 16;
        }
        return end - at;
    }

    /** Writes the form. */
    void write(ByteBuf out) {
        out.writeBytes(form);
    }

    int serializedSize() {
        return form.length;
    }

    int segmentCount() {
        return segments;
    }

    /** Where segment {@code s}'s entry starts in the form. */
    private int entry(int s) {
        int at = FIXED;
        for (int i = 0; i < s; i++) {
            at += 2 + keyLength(at) + 16;
        }
        return at;
    }

    private int keyLength(int entry) {
        return ((form[entry] & 0xff) << 8) | (form[entry + 1] & 0xff);
    }

    /** Field {@code field} (0 rows, 1 uncompressed length, 2 stored length, 3 CRC) of segment {@code s}. */
    private int figure(int s, int field) {
        int e = entry(s);
        return ByteBuffer.wrap(form).getInt(e + 2 + keyLength(e) + 4 * field);
    }

    /** The segment that would hold {@code key}: the last whose first key is not above it, or -1 if all are. */
    int segmentFor(byte[] key) {
        ByteBuffer b = ByteBuffer.wrap(form);
        int at = FIXED;
        int found = -1;
        for (int s = 0; s < segments; s++) {
            int length = keyLength(at);
            if (Keys.compare(b, at + 2, length, key) > 0) {
                break;
            }
            found = s;
            at += 2 + length + 16;
        }
        return found;
    }

    /** Offset from the start of the payload of segment {@code s}, its write id first. */
    int offset(int s) {
        int at = 1 + form.length;
        for (int i = 0; i < s; i++) {
            at += span(i);
        }
        return at;
    }

    /** Bytes segment {@code s} takes in the payload: its write id and its stored bytes. */
    int span(int s) {
        return SEGMENT_PREFIX + storedLength(s);
    }

    int rawLength(int s) {
        return figure(s, 1);
    }

    int storedLength(int s) {
        return figure(s, 2);
    }

    boolean compressed(int s) {
        return storedLength(s) < rawLength(s);
    }

    /** Bytes the whole payload takes: tag, this layout, then every segment. */
    int payloadBytes() {
        return segments == 0 ? 1 + form.length : offset(segments - 1) + span(segments - 1);
    }

    /**
     * Whether {@code span}, the {@link #span} bytes of segment {@code s} as read (position to
     * limit), belong to the block version this layout describes and arrived intact.
     */
    boolean matches(int s, ByteBuffer span) {
        if (span.remaining() != span(s) || span.getLong(span.position()) != writeId) {
            return false;
        }
        return crc(span) == figure(s, 3);
    }

    /** CRC32C of a segment's write id and stored bytes (position to limit; positions unchanged). */
    static int crc(ByteBuffer span) {
        CRC32C crc = new CRC32C();
        crc.update(span.duplicate());
        return (int) crc.getValue();
    }

    /** Heap bytes this layout takes. */
    long memoryBytes() {
        return 40 + 16 + form.length;
    }
}
