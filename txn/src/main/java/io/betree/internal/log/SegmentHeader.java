package io.betree.internal.log;

import io.betree.internal.fault.BetreeException;
import io.betree.internal.fault.CorruptionException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.zip.CRC32C;

/**
 * The 32-byte header at the start of every log segment (big-endian): magic {@code BeTreeWL} (8),
 * format version (4), header length (4), start LSN (8), reserved zero (4), CRC32C of the preceding 28
 * bytes (4). The first 16 bytes and the trailing CRC keep their meaning in every version, so any
 * reader can tell a damaged header from a newer one.
 */
final class SegmentHeader {

    /** Bytes of the header; the first record starts right after it. */
    static final int SIZE = 32;
    /** Current format version. */
    static final int VERSION = 1;

    private static final byte[] MAGIC = "BeTreeWL".getBytes(StandardCharsets.US_ASCII);
    private static final int CRC_OFFSET = 28;

    private SegmentHeader() {
    }

    /** The header of a segment whose first record has LSN {@code startLsn}, positioned at 0. */
    static ByteBuffer encode(long startLsn) {
        ByteBuffer b = ByteBuffer.allocate(SIZE);
        b.put(MAGIC).putInt(VERSION).putInt(SIZE).putLong(startLsn).putInt(0);
        b.putInt(CRC_OFFSET, crc(b));
        return b.clear();
    }

    /**
     * Validates a header read from {@code file} and returns its start LSN.
     *
     * @param header the first bytes of the file (fewer than {@link #SIZE} when the file is shorter)
     * @param expectedStartLsn the start LSN the file's name promises
     * @throws CorruptionException if the file is not a log segment or its header is damaged
     * @throws BetreeException if the segment was written by a newer format version
     */
    static long decode(Path file, ByteBuffer header, long expectedStartLsn) {
        ByteBuffer b = header.duplicate();
        if (b.remaining() >= MAGIC.length && !b.slice(b.position(), MAGIC.length).equals(ByteBuffer.wrap(MAGIC))) {
            throw new CorruptionException(file, "not a betree log segment (bad magic)");
        }
        if (b.remaining() < SIZE) {
            throw new CorruptionException(file, "segment header truncated: file has only " + b.remaining()
                    + " of " + SIZE + " bytes");
        }
        ByteBuffer h = b.slice(b.position(), SIZE);
        int storedCrc = h.getInt(CRC_OFFSET);
        if (storedCrc != crc(h)) {
            throw new CorruptionException(file, "segment header CRC mismatch");
        }
        int version = h.getInt(MAGIC.length);
        if (version > VERSION) {
            throw new BetreeException("log segment " + file + " has format version " + version
                    + "; this betree reads version " + VERSION + ": upgrade betree");
        }
        if (version != VERSION || h.getInt(12) != SIZE || h.getInt(24) != 0) {
            throw new CorruptionException(file, "segment header has impossible fields (version " + version
                    + ", length " + h.getInt(12) + ")");
        }
        long start = h.getLong(16);
        if (start != expectedStartLsn) {
            throw new CorruptionException(file, "segment header says start LSN " + start
                    + " but the file name says " + expectedStartLsn);
        }
        return start;
    }

    private static int crc(ByteBuffer header) {
        CRC32C crc = new CRC32C();
        crc.update(header.slice(0, CRC_OFFSET));
        return (int) crc.getValue();
    }
}
