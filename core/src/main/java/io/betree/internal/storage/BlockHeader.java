package io.betree.internal.storage;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.zip.CRC32C;

/**
 * The 32-byte header in front of every stored block, and the CRC32C that covers the header and the
 * stored payload together. The header repeats the logical block number, so a translation table entry
 * that points at the wrong place, or space reused while a stale reader looks at it, is detected.
 *
 * <pre>
 * 0  u32 marker "BLK1"   4 u8 codec id   5 u8 flags (0)   6 u16 header length (32)
 * 8  u64 block number    16 u32 uncompressed length        20 u32 stored length
 * 24 u32 reserved (0)    28 u32 CRC32C of bytes [0,28) followed by the stored payload
 * </pre>
 */
final class BlockHeader {

    /** Size of the header in bytes. */
    static final int SIZE = 32;

    /** "BLK1" read as a little-endian int. */
    static final int MARKER = 0x314B4C42;

    private static final int CRC_OFFSET = 28;

    private BlockHeader() {
    }

    /**
     * Fills in the header at positions [0, 32) of {@code block}, whose stored payload already sits at
     * [32, 32 + storedLength), including the CRC. Does not move the buffer's position.
     */
    static void write(ByteBuffer block, int codecId, long blockNumber, int uncompressedLength, int storedLength) {
        ByteBuffer buf = block.duplicate().order(ByteOrder.LITTLE_ENDIAN);
        buf.putInt(0, MARKER);
        buf.put(4, (byte) codecId);
        buf.put(5, (byte) 0);
        buf.putShort(6, (short) SIZE);
        buf.putLong(8, blockNumber);
        buf.putInt(16, uncompressedLength);
        buf.putInt(20, storedLength);
        buf.putInt(24, 0);
        buf.putInt(CRC_OFFSET, crc(block, storedLength));
    }

    /** CRC32C over header bytes [0,28) and the stored payload at [32, 32 + storedLength). */
    static int crc(ByteBuffer block, int storedLength) {
        CRC32C crc = new CRC32C();
        ByteBuffer view = block.duplicate();
        crc.update(view.limit(CRC_OFFSET).position(0));
        crc.update(view.limit(SIZE + storedLength).position(SIZE));
        return (int) crc.getValue();
    }

    /**
     * A block's header fields after validation.
     *
     * @param codecId the codec that produced the stored payload
     * @param uncompressedLength length after decompression
     * @param storedLength length of the payload on disk
     */
    record Fields(int codecId, int uncompressedLength, int storedLength) {
    }

    /**
     * Validates the block held in {@code block}[0, diskLength) read for {@code expectedBlockNumber}.
     *
     * @return the fields when everything including the CRC checks out
     * @throws InvalidDataException with a description of the first problem found; callers turn it
     *     into a {@link io.betree.internal.fault.CorruptionException}
     */
    static Fields verify(ByteBuffer block, int diskLength, long expectedBlockNumber)
            throws InvalidDataException {
        Fields fields = verifyFields(block, diskLength, expectedBlockNumber);
        verifyCrc(block, fields);
        return fields;
    }

    /**
     * Checks the CRC of the block held in {@code block}, whose header passed {@link #verifyFields}
     * with {@code fields}.
     *
     * @throws InvalidDataException if it does not match
     */
    static void verifyCrc(ByteBuffer block, Fields fields) throws InvalidDataException {
        int storedCrc = block.duplicate().order(ByteOrder.LITTLE_ENDIAN).getInt(CRC_OFFSET);
        int actualCrc = crc(block, fields.storedLength());
        if (storedCrc != actualCrc) {
            throw new InvalidDataException(String.format("checksum mismatch: stored 0x%08x, computed 0x%08x",
                    storedCrc, actualCrc));
        }
    }

    /**
     * Validates the header alone, held in {@code block}[0, 32), of a block of {@code diskLength}
     * bytes read for {@code expectedBlockNumber}: every check of {@link #verify} but the CRC, which
     * needs the whole payload.
     *
     * @throws InvalidDataException with a description of the first problem found
     */
    static Fields verifyFields(ByteBuffer block, int diskLength, long expectedBlockNumber)
            throws InvalidDataException {
        ByteBuffer buf = block.duplicate().order(ByteOrder.LITTLE_ENDIAN);
        if (diskLength < SIZE) {
            throw new InvalidDataException("block length " + diskLength + " shorter than its header");
        }
        int marker = buf.getInt(0);
        if (marker != MARKER) {
            throw new InvalidDataException(String.format("bad block marker 0x%08x", marker));
        }
        int headerLength = Short.toUnsignedInt(buf.getShort(6));
        if (headerLength != SIZE) {
            throw new InvalidDataException("bad block header length " + headerLength);
        }
        long number = buf.getLong(8);
        if (number != expectedBlockNumber) {
            throw new InvalidDataException("block header names block " + number);
        }
        int uncompressed = buf.getInt(16);
        int stored = buf.getInt(20);
        if (uncompressed < 0 || uncompressed > BlockFormat.MAX_BLOCK_SIZE) {
            throw new InvalidDataException("impossible uncompressed length " + uncompressed);
        }
        if (stored < 0 || stored > BlockFormat.MAX_BLOCK_SIZE || stored != diskLength - SIZE) {
            throw new InvalidDataException("stored length " + stored + " does not match the block's "
                    + diskLength + " bytes on disk");
        }
        int codecId = Byte.toUnsignedInt(buf.get(4));
        if (codecId == 0 && stored != uncompressed) {
            throw new InvalidDataException("uncompressed block with stored length " + stored
                    + " and uncompressed length " + uncompressed);
        }
        return new Fields(codecId, uncompressed, stored);
    }
}
