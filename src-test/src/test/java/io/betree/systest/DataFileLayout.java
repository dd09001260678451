package io.betree.systest;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.zip.CRC32C;

/**
 * A read-only, test-side decoder of the block file format (the layout documented in the javadoc of
 * {@code FileHeader}, {@code TableSnapshot} and {@code BlockHeader}), so that tests can aim damage
 * at a header slot, the translation table, one particular block or free space. Independent of the
 * engine's own code on purpose: if the two disagree, the tests notice.
 */
final class DataFileLayout {
    static final int ALIGNMENT = 4096;
    static final int SLOT_SIZE = 4096;
    static final int HEADER_SIZE = 128;
    static final int BLOCK_HEADER_SIZE = 32;
    static final int TABLE_PREFIX = 40;
    static final int TABLE_ENTRY = 20;
    static final byte[] MAGIC = "BeTreeBF".getBytes(StandardCharsets.US_ASCII);

    /** A decoded, CRC-valid header slot. */
    record Header(int slot, long sequence, long tableOffset, long tableLength, int rootLength, long nextBlockNumber,
            long entryCount) {
    }

    /** A live block: its number, file offset and on-disk length (header included, padding excluded). */
    record Block(long number, long offset, int length, int codecId, int uncompressedLength) {
        long end() {
            return offset + length;
        }

        boolean contains(long position) {
            return position >= offset && position < end();
        }
    }

    final long fileSize;
    /** Valid headers by slot; null where the slot does not hold a valid header. */
    final Header[] slots = new Header[2];
    /** The valid header with the highest sequence. */
    final Header newest;
    final List<Block> blocks = new ArrayList<>();

    private DataFileLayout(Path file) throws IOException {
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
            fileSize = ch.size();
            for (int s = 0; s < 2; s++) {
                ByteBuffer buf = read(ch, (long) s * SLOT_SIZE, HEADER_SIZE);
                slots[s] = parseHeader(s, buf);
            }
            Header best = null;
            for (Header h : slots) {
                if (h != null && (best == null || h.sequence() > best.sequence())) {
                    best = h;
                }
            }
            if (best == null) {
                throw new IllegalStateException(file + " has no valid header");
            }
            newest = best;
            ByteBuffer table = read(ch, best.tableOffset(), (int) best.tableLength());
            int at = TABLE_PREFIX + Math.max(0, best.rootLength());
            for (long i = 0; i < best.entryCount(); i++, at += TABLE_ENTRY) {
                long number = table.getLong(at);
                long offset = table.getLong(at + 8);
                int length = table.getInt(at + 16);
                if (offset == 0) {
                    continue; // allocated but never written
                }
                ByteBuffer header = read(ch, offset, BLOCK_HEADER_SIZE);
                if (header.getInt(0) != 0x314B4C42 || header.getLong(8) != number) {
                    throw new IllegalStateException("block " + number + " at " + offset + " has no valid header");
                }
                blocks.add(new Block(number, offset, length, header.get(4) & 0xff, header.getInt(16)));
            }
        }
    }

    static DataFileLayout read(Path file) throws IOException {
        return new DataFileLayout(file);
    }

    private static ByteBuffer read(FileChannel ch, long position, int length) throws IOException {
        ByteBuffer buf = ByteBuffer.allocate(length).order(ByteOrder.LITTLE_ENDIAN);
        while (buf.hasRemaining()) {
            if (ch.read(buf, position + buf.position()) < 0) {
                break;
            }
        }
        return buf.flip();
    }

    private static Header parseHeader(int slot, ByteBuffer buf) {
        if (buf.remaining() < HEADER_SIZE) {
            return null;
        }
        byte[] magic = new byte[8];
        buf.get(0, magic);
        if (!Arrays.equals(magic, MAGIC) || buf.getInt(12) != HEADER_SIZE) {
            return null;
        }
        if (buf.getInt(HEADER_SIZE - 4) != crc32c(buf.array(), 0, HEADER_SIZE - 4)) {
            return null;
        }
        return new Header(slot, buf.getLong(16), buf.getLong(32), buf.getLong(40), buf.getInt(52), buf.getLong(64),
                buf.getLong(72));
    }

    /** The slot that does not hold the newest checkpoint. */
    int olderSlot() {
        return 1 - newest.slot();
    }

    /** The live block whose bytes include {@code position}, or null. */
    Block blockAt(long position) {
        for (Block b : blocks) {
            if (b.contains(position)) {
                return b;
            }
        }
        return null;
    }

    /** Whether {@code position} lies in the newest checkpoint's translation table. */
    boolean inNewestTable(long position) {
        return position >= newest.tableOffset() && position < newest.tableOffset() + newest.tableLength();
    }

    static int crc32c(byte[] bytes, int from, int to) {
        CRC32C crc = new CRC32C();
        crc.update(bytes, from, to - from);
        return (int) crc.getValue();
    }

    /**
     * Recomputes the CRC of the block stored in {@code block} (its whole on-disk form, header first),
     * as the engine does: over header bytes [0,28) and the stored payload.
     */
    static void fixBlockCrc(byte[] block) {
        ByteBuffer buf = ByteBuffer.wrap(block).order(ByteOrder.LITTLE_ENDIAN);
        int stored = buf.getInt(20);
        CRC32C crc = new CRC32C();
        crc.update(block, 0, 28);
        crc.update(block, BLOCK_HEADER_SIZE, stored);
        buf.putInt(28, (int) crc.getValue());
    }

    /**
     * Recomputes the CRC of the head of the leaf whose payload {@code leaf} holds (big-endian, tag
     * {@code 'Q'} at 0): over the head's bytes, which follow the tag, the lengths of head, filters
     * and chunk maps, and the CRC itself (at 13).
     */
    static void fixLeafHeadCrc(ByteBuffer leaf) {
        int headLength = leaf.getInt(1);
        CRC32C crc = new CRC32C();
        crc.update(leaf.duplicate().position(17).limit(17 + headLength));
        leaf.putInt(13, (int) crc.getValue());
    }

    /**
     * Recomputes the CRC of the chunk record at {@code record} of the chunked basement whose payload
     * {@code basement} holds (big-endian, tag {@code 'K'} at 0): over the record's first 21 bytes
     * and its stored bytes, whose length is at 17 of the record; the CRC is at 21.
     */
    static void fixChunkCrc(ByteBuffer basement, int record) {
        int stored = basement.getInt(record + 17);
        CRC32C crc = new CRC32C();
        crc.update(basement.duplicate().position(record).limit(record + 21));
        crc.update(basement.duplicate().position(record + 25).limit(record + 25 + stored));
        basement.putInt(record + 21, (int) crc.getValue());
    }

    /** Recomputes the CRC of a 128-byte header slot image. */
    static void fixHeaderCrc(byte[] header) {
        ByteBuffer.wrap(header).order(ByteOrder.LITTLE_ENDIAN).putInt(HEADER_SIZE - 4,
                crc32c(header, 0, HEADER_SIZE - 4));
    }

    @Override
    public String toString() {
        return "DataFileLayout[size " + fileSize + ", newest checkpoint " + newest.sequence() + " in slot "
                + newest.slot() + ", table at " + newest.tableOffset() + "+" + newest.tableLength() + ", "
                + blocks.size() + " blocks]";
    }
}
