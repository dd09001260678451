package io.betree.internal.storage;

import java.nio.ByteBuffer;
import java.util.zip.CRC32C;

/**
 * Constants and helpers shared by the parts of the block file format; see {@code docs/format.md}.
 * All multi-byte integers on disk are little-endian.
 */
final class BlockFormat {

    /**
     * Every block and table region starts at a multiple of this many bytes, and no two of them share
     * an aligned unit. 4096 is the page size of the usual operating systems and the physical sector
     * size of current disks and SSDs, so a torn or misdirected write of one block cannot damage a
     * neighbour that a checkpoint still references, and the layout stays usable with direct I/O. The
     * price, about 2 KiB of padding per block, is small against nodes of tens of KiB and more.
     */
    static final int ALIGNMENT = 4096;

    /** Each of the two header slots occupies one aligned unit: slot 0 at 0, slot 1 at 4096. */
    static final int HEADER_SLOT_SIZE = ALIGNMENT;

    /** Offset of the first byte available to blocks and tables. */
    static final long DATA_START = 2L * HEADER_SLOT_SIZE;

    /** Largest uncompressed or stored payload of one block (64 MiB); larger is corruption on read. */
    static final int MAX_BLOCK_SIZE = 64 << 20;

    /** Largest root record (16 MiB). */
    static final int MAX_ROOT_RECORD_SIZE = 16 << 20;

    /** Largest block number plus one: numbers index Java arrays in memory. */
    static final long MAX_BLOCK_COUNT = Integer.MAX_VALUE - 64;

    private BlockFormat() {
    }

    /** {@code value} rounded up to a multiple of {@link #ALIGNMENT}. */
    static long alignUp(long value) {
        return (value + ALIGNMENT - 1) & -ALIGNMENT;
    }

    /** CRC32C of the bytes of {@code buf} between {@code from} and {@code to}, ignoring its position. */
    static int crc32c(ByteBuffer buf, int from, int to) {
        CRC32C crc = new CRC32C();
        crc.update(buf.duplicate().limit(to).position(from));
        return (int) crc.getValue();
    }
}
