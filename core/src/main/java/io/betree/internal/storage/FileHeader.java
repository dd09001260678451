package io.betree.internal.storage;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;

/**
 * One of the two header slots of a block file: it names a checkpoint (sequence number, translation
 * table and root record location) and protects itself with a CRC32C. The layout is in
 * {@code docs/format.md}; the first 16 bytes (magic, version, header length) keep their meaning in
 * every format version so that any reader can check a header's CRC before judging its version.
 *
 * @param sequence checkpoint sequence number; the valid slot with the highest one is current
 * @param tableOffset file offset of the translation table region
 * @param tableLength length of the translation table region in bytes
 * @param tableCrc CRC32C of the whole translation table region
 * @param rootOffset file offset of the root record, 0 when there is none
 * @param rootLength length of the root record, -1 when there is none
 * @param nextBlockNumber one more than the highest block number ever handed out and not reclaimed
 * @param entryCount number of entries in the translation table
 * @param allocatedEnd end of the space in use when the checkpoint was taken (informational)
 */
record FileHeader(long sequence, long tableOffset, long tableLength, int tableCrc, long rootOffset,
        int rootLength, long nextBlockNumber, long entryCount, long allocatedEnd) {

    /** "BeTreeBF" in ASCII. */
    static final byte[] MAGIC = "BeTreeBF".getBytes(StandardCharsets.US_ASCII);

    /**
     * Format version written by this code. Version 2 stored the message buffers of internal nodes
     * as blocks of their own; version 3 adds a key filter per basement to each leaf; version 4 lets
     * a key filter have several parts; version 5 lets message buffers hold updates (message type 3);
     * version 6 range messages (types 4 and 5, range updates and range deletes); version 7 stores a
     * leaf with a head of its own, checksummed, that a read can fetch without the leaf's filters
     * (tag 'P'); version 8 stores a basement in chunks compressed one by one (tag 'K') and a leaf
     * with the chunk maps of its basements (tag 'Q'), so a point read can fetch one chunk.
     */
    static final int FORMAT_VERSION = 8;

    /**
     * The oldest format version this code reads: version 7 is version 8 with basements compressed
     * whole (tag 'B') and leaves without chunk maps (tag 'P'), version 6 besides with leaves of the
     * older form (tag 'L', read whole), versions 4 and 5 besides without range messages (and 4
     * without updates), a version 3 file one whose filters each have one part besides; their header
     * says 8 from their first checkpoint here on. Files of older versions are refused by name.
     */
    static final int OLDEST_READABLE_VERSION = 3;

    /** Bytes of a header (versions 1 to 8), CRC included. */
    static final int SIZE = 128;

    private static final int CRC_OFFSET = SIZE - 4;
    private static final int MIN_SIZE = 20;

    /** Serializes this header into a new little-endian buffer of {@link #SIZE} bytes, flipped. */
    ByteBuffer encode() {
        ByteBuffer buf = ByteBuffer.allocate(SIZE).order(ByteOrder.LITTLE_ENDIAN);
        buf.put(MAGIC);
        buf.putInt(FORMAT_VERSION);
        buf.putInt(SIZE);
        buf.putLong(sequence);
        buf.putInt(BlockFormat.ALIGNMENT);
        buf.putInt(0); // flags
        buf.putLong(tableOffset);
        buf.putLong(tableLength);
        buf.putInt(tableCrc);
        buf.putInt(rootLength);
        buf.putLong(rootOffset);
        buf.putLong(nextBlockNumber);
        buf.putLong(entryCount);
        buf.putLong(allocatedEnd);
        buf.position(CRC_OFFSET);
        buf.putInt(BlockFormat.crc32c(buf, 0, CRC_OFFSET));
        return buf.flip();
    }

    /** Outcome of parsing one header slot. */
    enum Status {
        /** The slot holds a header this code can use. */
        VALID,
        /** The slot does not start with the magic (never written, or not our file). */
        BAD_MAGIC,
        /** The magic is there but the CRC or a field is wrong (torn write or damage). */
        DAMAGED,
        /** An intact header of a newer format version. */
        NEWER_VERSION,
        /** An intact header of an older format version, which this code no longer reads. */
        OLDER_VERSION
    }

    /**
     * Result of {@link #parse}.
     *
     * @param status the verdict
     * @param header the header when {@code status} is {@code VALID}, else {@code null}
     * @param version the format version found, or -1 when unknown
     * @param problem a description of what is wrong, or {@code null}
     */
    record Parsed(Status status, FileHeader header, int version, String problem) {
    }

    /** Parses a slot's bytes (from {@code slot.position()}, up to one slot) without trusting any of them. */
    static Parsed parse(ByteBuffer slot) {
        ByteBuffer buf = slot.slice().order(ByteOrder.LITTLE_ENDIAN);
        if (buf.remaining() < MIN_SIZE) {
            return new Parsed(Status.BAD_MAGIC, null, -1, "slot truncated to " + buf.remaining() + " bytes");
        }
        byte[] magic = new byte[MAGIC.length];
        buf.get(0, magic);
        if (!java.util.Arrays.equals(magic, MAGIC)) {
            return new Parsed(Status.BAD_MAGIC, null, -1, "bad magic");
        }
        int version = buf.getInt(8);
        int length = buf.getInt(12);
        if (length < MIN_SIZE || length > buf.remaining() || length > BlockFormat.HEADER_SLOT_SIZE) {
            return new Parsed(Status.DAMAGED, null, version, "impossible header length " + length);
        }
        int storedCrc = buf.getInt(length - 4);
        if (storedCrc != BlockFormat.crc32c(buf, 0, length - 4)) {
            return new Parsed(Status.DAMAGED, null, version, "header checksum mismatch");
        }
        if (version > FORMAT_VERSION) {
            return new Parsed(Status.NEWER_VERSION, null, version, "format version " + version);
        }
        if (version >= 1 && version < OLDEST_READABLE_VERSION && length == SIZE) {
            return new Parsed(Status.OLDER_VERSION, null, version, "format version " + version);
        }
        if (version < 1 || length != SIZE) {
            return new Parsed(Status.DAMAGED, null, version,
                    "unknown format version " + version + " with header length " + length);
        }
        int alignment = buf.getInt(24);
        if (alignment != BlockFormat.ALIGNMENT) {
            return new Parsed(Status.DAMAGED, null, version, "unsupported alignment " + alignment);
        }
        FileHeader header = new FileHeader(buf.getLong(16), buf.getLong(32), buf.getLong(40), buf.getInt(48),
                buf.getLong(56), buf.getInt(52), buf.getLong(64), buf.getLong(72), buf.getLong(80));
        String problem = header.checkFields();
        if (problem != null) {
            return new Parsed(Status.DAMAGED, null, version, problem);
        }
        return new Parsed(Status.VALID, header, version, null);
    }

    /** Checks field ranges that need no file access; returns a description of the first problem or null. */
    private String checkFields() {
        if (sequence < 1) {
            return "bad checkpoint sequence " + sequence;
        }
        if (tableOffset < BlockFormat.DATA_START || tableOffset % BlockFormat.ALIGNMENT != 0) {
            return "bad table offset " + tableOffset;
        }
        if (tableLength < TableSnapshot.PREFIX_SIZE || tableLength > Long.MAX_VALUE / 2) {
            return "bad table length " + tableLength;
        }
        if (rootLength == -1 ? rootOffset != 0
                : rootLength < 0 || rootLength > BlockFormat.MAX_ROOT_RECORD_SIZE
                        || rootOffset != tableOffset + TableSnapshot.PREFIX_SIZE) {
            return "bad root record location " + rootOffset + "+" + rootLength;
        }
        if (nextBlockNumber < 0 || nextBlockNumber > BlockFormat.MAX_BLOCK_COUNT) {
            return "bad next block number " + nextBlockNumber;
        }
        if (entryCount < 0 || entryCount > nextBlockNumber) {
            return "bad entry count " + entryCount;
        }
        long expected = TableSnapshot.PREFIX_SIZE + Math.max(rootLength, 0)
                + entryCount * TableSnapshot.ENTRY_SIZE;
        if (tableLength != expected) {
            return "table length " + tableLength + " does not match " + entryCount + " entries";
        }
        return null;
    }
}
