package io.betree.internal.tree;

import java.nio.ByteBuffer;

/**
 * The layout of a row, one version of a key, as {@link Basement} holds rows and stored chunks
 * ({@link StoredBasement}) hold them: key length (2 bytes), flags (1: {@link #TOMBSTONE},
 * {@link #HAS_TS}), value length (4), the commit timestamp (8, only when flagged), key, value.
 * Accessors take a view and the row's offset in it.
 */
final class RowFormat {
    static final int ROW_HEADER = 7;
    static final int TOMBSTONE = 1;
    static final int HAS_TS = 2;

    private RowFormat() {
    }

    static int tsBytes(int flags) {
        return (flags & HAS_TS) != 0 ? 8 : 0;
    }

    static int flags(ByteBuffer buf, int off) {
        return buf.get(off + 2) & 0xff;
    }

    static int keyLength(ByteBuffer buf, int off) {
        return buf.getShort(off) & 0xffff;
    }

    static int keyOffset(ByteBuffer buf, int off) {
        return off + ROW_HEADER + tsBytes(flags(buf, off));
    }

    static int rowLength(ByteBuffer buf, int off) {
        return ROW_HEADER + tsBytes(flags(buf, off)) + keyLength(buf, off) + buf.getInt(off + 3);
    }

    static long rowTs(ByteBuffer buf, int off) {
        return (flags(buf, off) & HAS_TS) != 0 ? buf.getLong(off + ROW_HEADER) : 0L;
    }

    static int compareRowKeys(ByteBuffer buf, int a, int b) {
        return Keys.compare(buf, keyOffset(buf, a), keyLength(buf, a), buf, keyOffset(buf, b), keyLength(buf, b));
    }

    /**
     * The value of {@code key} a snapshot at {@code snapshotTs} sees in {@code rows}, whole rows
     * from position to limit in sorted order, or null: a scan, for the few rows of one chunk.
     *
     * @throws IllegalArgumentException if a row has impossible lengths or flags
     */
    static byte[] find(ByteBuffer rows, byte[] key, long snapshotTs) {
        int end = rows.limit();
        for (int off = rows.position(); off < end; ) {
            if (off + ROW_HEADER > end || rows.getInt(off + 3) < 0 || (flags(rows, off) & ~(TOMBSTONE | HAS_TS)) != 0
                    || (long) off + ROW_HEADER + tsBytes(flags(rows, off)) + keyLength(rows, off)
                            + rows.getInt(off + 3) > end) {
                throw new IllegalArgumentException("a row of impossible lengths or flags in its chunk");
            }
            int c = Keys.compare(rows, keyOffset(rows, off), keyLength(rows, off), key);
            if (c > 0) {
                return null;
            }
            if (c == 0 && rowTs(rows, off) <= snapshotTs) {
                return (flags(rows, off) & TOMBSTONE) != 0 ? null
                        : Keys.copy(rows, keyOffset(rows, off) + keyLength(rows, off), rows.getInt(off + 3));
            }
            off += rowLength(rows, off);
        }
        return null;
    }
}
