package io.betree.internal.log;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.zip.CRC32C;

/**
 * Layout of one log record (big-endian): payload length (4), CRC32C (4), LSN (8), synced LSN (8),
 * type code (1), payload. The CRC covers every byte of the record except the CRC field itself. The
 * LSN is the record's position in the log; the synced LSN is how far the log was durable when the
 * record was appended, which lets recovery tell a torn tail from damage to durable records.
 */
final class RecordFormat {

    /** Bytes before the payload. */
    static final int HEADER_BYTES = 25;

    private static final int CRC = 4;
    private static final int LSN = 8;
    private static final int SYNCED_LSN = 16;
    private static final int TYPE = 24;

    private RecordFormat() {
    }

    /** Bytes a record with a payload of {@code payloadLength} bytes takes. */
    static int size(int payloadLength) {
        return HEADER_BYTES + payloadLength;
    }

    /**
     * Writes the record into {@code out} from its position (which must have room for
     * {@link #size} bytes) and advances the position past it. {@code payload} is not moved.
     */
    static void encode(ByteBuffer out, long lsn, long syncedLsn, LogRecordType type, ByteBuffer payload) {
        int begin = out.position();
        out.putInt(payload.remaining()).putInt(0).putLong(lsn).putLong(syncedLsn).put(type.code());
        out.put(payload.duplicate());
        ByteBuffer record = out.duplicate().position(begin).limit(out.position()).slice();
        out.putInt(begin + CRC, crc(record));
    }

    /** The CRC32C of a whole record (positioned at 0), skipping its CRC field. */
    private static int crc(ByteBuffer record) {
        CRC32C crc = new CRC32C();
        crc.update(record.slice(0, CRC));
        crc.update(record.slice(LSN, record.limit() - LSN));
        return (int) crc.getValue();
    }

    /**
     * What was found at an offset of a segment.
     *
     * @param problem null for a valid record, else why the bytes are not one
     * @param incomplete whether the problem is that the file ends inside the record
     * @param size the record's bytes (valid records only)
     * @param syncedLsn its synced LSN (valid records only)
     * @param typeCode its type code (valid records only)
     * @param payload its payload, valid until the window is used again (valid records only)
     */
    record Examined(String problem, boolean incomplete, int size, long syncedLsn, byte typeCode, ByteBuffer payload) {

        /** Whether a complete record with the expected LSN and a correct CRC was found. */
        boolean valid() {
            return problem == null;
        }

        static Examined bad(String problem, boolean incomplete) {
            return new Examined(problem, incomplete, 0, 0, (byte) 0, null);
        }
    }

    /**
     * Examines the bytes at {@code offset} of {@code window}, which must hold a record whose LSN is
     * {@code expectedLsn}: the header must be complete and carry that LSN, the length must be
     * possible, the payload complete and the CRC correct, checked in that order (the cheap LSN test
     * first, so that scanning for records at every offset is fast).
     */
    static Examined examine(SegmentWindow window, long offset, long expectedLsn) throws IOException {
        long left = window.size() - offset;
        if (left < HEADER_BYTES) {
            return Examined.bad("file ends " + left + " bytes into a record header", true);
        }
        ByteBuffer header = window.bytes(offset, HEADER_BYTES);
        long lsn = header.getLong(LSN);
        if (lsn != expectedLsn) {
            return Examined.bad("LSN field holds " + lsn + " instead of " + expectedLsn, false);
        }
        int length = header.getInt(0);
        if (length < 0 || length > WriteAheadLog.MAX_PAYLOAD_BYTES) {
            return Examined.bad("impossible payload length " + length, false);
        }
        if (left < size(length)) {
            return Examined.bad("file ends " + left + " bytes into a record of " + size(length) + " bytes", true);
        }
        ByteBuffer record = window.bytes(offset, size(length));
        if (record.getInt(CRC) != crc(record)) {
            return Examined.bad("CRC mismatch", false);
        }
        return new Examined(null, false, size(length), record.getLong(SYNCED_LSN), record.get(TYPE),
                record.slice(HEADER_BYTES, length).asReadOnlyBuffer());
    }
}
