package io.betree.internal.tree;

import java.nio.ByteBuffer;
import java.util.List;

/**
 * Where the chunks of one stored basement ({@link BasementChunks}) lie, and which keys each may
 * hold: what a point read needs to fetch the one chunk of an uncached basement its key can be in.
 * Leaves keep the maps of their basements, in their blocks and in memory ({@link LeafNode}); a
 * basement's write makes a new one ({@link RecentChunkMaps}).
 *
 * <p>An entry (big-endian, docs/format.md): its length in bytes (4, this field included), the
 * basement's block number (8), the stamp of the stored version it describes (8), chunk count m
 * (2, at least 1), m + 1 offsets (4 each) of the chunk records in the basement's stored payload
 * (the last is the payload's end), then m - 1 separators as key length (2) and key. Separator j is
 * at most the first key of chunk j and above the last key of chunk j - 1, so a key belongs to the
 * chunk of the last separator not above it (chunk 0 when there is none). An entry is a hint: a
 * chunk read checks the stamp and checksum the chunk itself carries, and a mismatch reads the
 * basement whole.
 *
 * <p>Stateless; the methods read entries at absolute positions of a buffer.
 */
final class ChunkMap {
    /** Bytes of an entry before its offsets: length, block, stamp, chunk count. */
    static final int FIXED = 22;
    static final int MAX_CHUNKS = 0xffff;

    private ChunkMap() {
    }

    /**
     * An entry for basement {@code block}'s version {@code stamp}, whose chunk records start at
     * {@code offsets[0..m)} and end at {@code offsets[m]}, with separators {@code separators} (m - 1).
     */
    static byte[] build(long block, long stamp, int[] offsets, List<byte[]> separators) {
        int m = offsets.length - 1;
        int length = FIXED + offsets.length * 4;
        for (byte[] s : separators) {
            length += 2 + s.length;
        }
        ByteBuffer out = ByteBuffer.allocate(length);
        out.putInt(length).putLong(block).putLong(stamp).putShort((short) m);
        for (int offset : offsets) {
            out.putInt(offset);
        }
        for (byte[] s : separators) {
            out.putShort((short) s.length).put(s);
        }
        return out.array();
    }

    /**
     * The length of the well-formed entry at {@code at}, which must end by {@code end}; -1 when the
     * bytes there are not one (lengths that do not add up, offsets out of order, separators out of
     * order).
     */
    static int check(ByteBuffer buf, int at, int end) {
        if (end - at < FIXED) {
            return -1;
        }
        int length = buf.getInt(at);
        int m = chunks(buf, at);
        if (length < FIXED || length > end - at || m < 1 || FIXED + (m + 1) * 4 > length) {
            return -1;
        }
        int previous = -1;
        for (int j = 0; j <= m; j++) {
            int offset = buf.getInt(at + FIXED + 4 * j);
            if (offset <= previous) {
                return -1;
            }
            previous = offset;
        }
        int pos = at + FIXED + (m + 1) * 4;
        int previousKey = -1;
        int previousLength = 0;
        for (int j = 1; j < m; j++) {
            if (pos + 2 > at + length) {
                return -1;
            }
            int keyLength = buf.getShort(pos) & 0xffff;
            if (pos + 2 + keyLength > at + length || previousKey >= 0
                    && Keys.compare(buf, previousKey, previousLength, buf, pos + 2, keyLength) >= 0) {
                return -1;
            }
            previousKey = pos + 2;
            previousLength = keyLength;
            pos += 2 + keyLength;
        }
        return pos == at + length ? length : -1;
    }

    /** The position of the entry for basement {@code block} among the checked entries in {@code [start, end)}, or -1. */
    static int find(ByteBuffer buf, int start, int end, long block) {
        for (int at = start; at < end; at += buf.getInt(at)) {
            if (buf.getLong(at + 4) == block) {
                return at;
            }
        }
        return -1;
    }

    static long block(ByteBuffer buf, int at) {
        return buf.getLong(at + 4);
    }

    static long stamp(ByteBuffer buf, int at) {
        return buf.getLong(at + 12);
    }

    static int chunks(ByteBuffer buf, int at) {
        return buf.getShort(at + 20) & 0xffff;
    }

    /** Where chunk {@code j}'s record starts in the basement's payload; {@code j == m} gives the end of the last. */
    static int recordStart(ByteBuffer buf, int at, int j) {
        return buf.getInt(at + FIXED + 4 * j);
    }

    /** The chunk of the entry at {@code at} that holds {@code key}, if the basement holds it. */
    static int chunkFor(ByteBuffer buf, int at, byte[] key) {
        int m = chunks(buf, at);
        int pos = at + FIXED + (m + 1) * 4;
        int chunk = 0;
        for (int j = 1; j < m; j++) {
            int keyLength = buf.getShort(pos) & 0xffff;
            if (Keys.compare(buf, pos + 2, keyLength, key) > 0) {
                break;
            }
            chunk = j;
            pos += 2 + keyLength;
        }
        return chunk;
    }
}
