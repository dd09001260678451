package io.betree.internal.storage;

import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.zip.CRC32C;

/**
 * An immutable copy of the block translation table, as captured by a checkpoint or loaded from one,
 * and its on-disk encoding: the translation table region.
 *
 * <pre>
 * 0  u32 magic "BTT1"   4 u32 flags (0)   8 u64 checkpoint sequence   16 u64 next block number
 * 24 u64 entry count    32 i32 root record length (-1: none)          36 u32 reserved (0)
 * 40 root record bytes, then one 20-byte entry per allocated block number, ascending:
 *    u64 block number, u64 offset, u32 on-disk length   (offset 0 and length 0: not yet written)
 * </pre>
 *
 * The region's CRC32C is kept in the file header that points at it. Encoding and decoding stream
 * through a caller-supplied scratch buffer, so a table of any size needs no buffer of its size.
 *
 * @param offsets per block number: {@link TranslationTable#FREE}, {@link TranslationTable#UNWRITTEN}
 *     or the file offset of the block
 * @param lengths per block number: on-disk length of the block, 0 when not written
 * @param size number of block numbers covered (the next block number)
 * @param entryCount number of allocated numbers, that is entries in the encoding
 */
record TableSnapshot(long[] offsets, int[] lengths, int size, long entryCount) {

    /** Bytes before the root record. */
    static final int PREFIX_SIZE = 40;

    /** Bytes per entry. */
    static final int ENTRY_SIZE = 20;

    /** "BTT1" read as a little-endian int. */
    static final int MAGIC = 0x31545442;

    /** The empty table of a new file. */
    static TableSnapshot empty() {
        return new TableSnapshot(new long[0], new int[0], 0, 0);
    }

    /** Offset of the block in this snapshot, {@link TranslationTable#FREE} when not allocated. */
    long offset(long blockNumber) {
        return blockNumber >= 0 && blockNumber < size ? offsets[(int) blockNumber] : TranslationTable.FREE;
    }

    /** On-disk length of the block in this snapshot, 0 when not written. */
    int length(long blockNumber) {
        return blockNumber >= 0 && blockNumber < size ? lengths[(int) blockNumber] : 0;
    }

    /** Length of the encoded region with a root record of {@code rootLength} bytes (-1: none). */
    long encodedLength(int rootLength) {
        return PREFIX_SIZE + Math.max(rootLength, 0) + entryCount * ENTRY_SIZE;
    }

    /**
     * Writes the encoded region at {@code position}.
     *
     * @param root the root record (remaining bytes, not consumed), or {@code null} for none
     * @param scratch a buffer of at least 4 KiB used for staging
     * @return the CRC32C of the region
     */
    int writeTo(FileHandle file, long position, long sequence, ByteBuffer root, ByteBuffer scratch)
            throws IOException {
        CRC32C crc = new CRC32C();
        ByteBuffer buf = scratch.clear().order(ByteOrder.LITTLE_ENDIAN);
        long pos = position;
        buf.putInt(MAGIC).putInt(0).putLong(sequence).putLong(size).putLong(entryCount);
        buf.putInt(root == null ? -1 : root.remaining()).putInt(0);
        if (root != null) {
            ByteBuffer r = root.duplicate();
            while (r.hasRemaining()) {
                if (!buf.hasRemaining()) {
                    pos = flush(file, buf, pos, crc);
                }
                int n = Math.min(r.remaining(), buf.remaining());
                buf.put(r.slice().limit(n));
                r.position(r.position() + n);
            }
        }
        for (int b = 0; b < size; b++) {
            if (offsets[b] == TranslationTable.FREE) {
                continue;
            }
            if (buf.remaining() < ENTRY_SIZE) {
                pos = flush(file, buf, pos, crc);
            }
            buf.putLong(b).putLong(offsets[b]).putInt(lengths[b]);
        }
        flush(file, buf, pos, crc);
        return (int) crc.getValue();
    }

    private static long flush(FileHandle file, ByteBuffer buf, long pos, CRC32C crc) throws IOException {
        buf.flip();
        int n = buf.remaining();
        crc.update(buf.duplicate());
        file.write(buf, pos);
        buf.clear();
        return pos + n;
    }

    /**
     * A decoded region.
     *
     * @param table the translation table
     * @param root a copy of the root record, or {@code null} when the checkpoint had none
     */
    record Loaded(TableSnapshot table, ByteBuffer root) {
    }

    /**
     * Reads and checks the region {@code header} points at. Block extents are checked for range here;
     * overlaps are checked by {@link ExtentAllocator#rebuild}.
     *
     * @param fileSize size of the file, which every extent must lie within
     * @param scratch a buffer of at least 4 KiB used for staging
     * @throws InvalidDataException if the region is damaged or inconsistent with the header
     * @throws IOException if reading fails for another reason than the file ending early
     */
    static Loaded readFrom(FileHandle file, FileHeader header, long fileSize, ByteBuffer scratch)
            throws IOException, InvalidDataException {
        if (header.tableOffset() + header.tableLength() > fileSize) {
            throw new InvalidDataException("translation table at " + header.tableOffset() + "+"
                    + header.tableLength() + " extends past the end of the file (" + fileSize + " bytes)");
        }
        RegionReader in = new RegionReader(file, header.tableOffset(), header.tableLength(), scratch);
        try {
            ByteBuffer buf = in.require(PREFIX_SIZE);
            int magic = buf.getInt();
            buf.getInt();
            long sequence = buf.getLong();
            long next = buf.getLong();
            long count = buf.getLong();
            int rootLength = buf.getInt();
            buf.getInt();
            if (magic != MAGIC || sequence != header.sequence() || next != header.nextBlockNumber()
                    || count != header.entryCount() || rootLength != header.rootLength()) {
                throw new InvalidDataException("translation table prefix does not match the header");
            }
            ByteBuffer root = null;
            if (rootLength >= 0) {
                root = ByteBuffer.allocate(rootLength);
                while (root.hasRemaining()) {
                    ByteBuffer chunk = in.require(1);
                    int n = Math.min(chunk.remaining(), root.remaining());
                    root.put(chunk.slice().limit(n));
                    chunk.position(chunk.position() + n);
                }
                root.flip();
            }
            int size = (int) next;
            long[] offsets = new long[size];
            int[] lengths = new int[size];
            java.util.Arrays.fill(offsets, TranslationTable.FREE);
            long previous = -1;
            for (long i = 0; i < count; i++) {
                buf = in.require(ENTRY_SIZE);
                long b = buf.getLong();
                long offset = buf.getLong();
                int length = buf.getInt();
                if (b <= previous || b >= size) {
                    throw new InvalidDataException("translation table entry " + i + " has block number " + b);
                }
                previous = b;
                offsets[(int) b] = offset;
                lengths[(int) b] = length;
            }
            if (in.crc() != header.tableCrc()) {
                throw new InvalidDataException("translation table checksum mismatch");
            }
            checkExtents(offsets, lengths, fileSize);
            if (size > 0 && offsets[size - 1] == TranslationTable.FREE) {
                throw new InvalidDataException("next block number " + size + " is not one past an entry");
            }
            return new Loaded(new TableSnapshot(offsets, lengths, size, count), root);
        } catch (EOFException e) {
            throw new InvalidDataException("translation table truncated: " + e.getMessage());
        }
    }

    private static void checkExtents(long[] offsets, int[] lengths, long fileSize) throws InvalidDataException {
        for (int b = 0; b < offsets.length; b++) {
            long offset = offsets[b];
            int length = lengths[b];
            if (offset == TranslationTable.FREE) {
                continue;
            }
            boolean unwritten = offset == TranslationTable.UNWRITTEN && length == 0;
            boolean sane = offset >= BlockFormat.DATA_START && offset % BlockFormat.ALIGNMENT == 0
                    && length >= BlockHeader.SIZE && length <= BlockHeader.SIZE + BlockFormat.MAX_BLOCK_SIZE
                    && offset + length <= fileSize;
            if (!unwritten && !sane) {
                throw new InvalidDataException("translation table places block " + b + " at " + offset + "+"
                        + length + " in a file of " + fileSize + " bytes");
            }
        }
    }

    /** Streams a region through a scratch buffer, computing its CRC32C on the way. */
    private static final class RegionReader {
        private final FileHandle file;
        private final ByteBuffer buf;
        private final CRC32C crc = new CRC32C();
        private long position;
        private long left;

        RegionReader(FileHandle file, long offset, long length, ByteBuffer scratch) {
            this.file = file;
            this.position = offset;
            this.left = length;
            this.buf = scratch.clear().order(ByteOrder.LITTLE_ENDIAN).flip();
        }

        /** Returns the buffer with at least {@code n} unread bytes (n at most 4 KiB). */
        ByteBuffer require(int n) throws IOException, InvalidDataException {
            if (buf.remaining() >= n) {
                return buf;
            }
            buf.compact();
            int want = (int) Math.min(buf.remaining(), left);
            if (want > 0) {
                ByteBuffer dst = buf.slice().limit(want);
                file.readFully(dst, position);
                crc.update(dst.flip());
                buf.position(buf.position() + want);
                position += want;
                left -= want;
            }
            buf.flip();
            if (buf.remaining() < n) {
                throw new InvalidDataException("translation table ends early");
            }
            return buf;
        }

        /** CRC of the region; valid once every byte was consumed. */
        int crc() throws InvalidDataException {
            if (left != 0 || buf.hasRemaining()) {
                throw new InvalidDataException("translation table has " + (left + buf.remaining())
                        + " unexpected trailing bytes");
            }
            return (int) crc.getValue();
        }
    }
}
