package io.betree.internal.tree;

import io.betree.compression.BlockCompressor;
import io.betree.compression.Compressors;
import io.betree.internal.memory.NodeMemory;
import io.netty.buffer.ByteBuf;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.concurrent.ThreadLocalRandom;
import java.util.zip.CRC32C;

/**
 * The stored form of a {@link Basement}: its rows cut into chunks of about {@link #CHUNK_BYTES}, each
 * compressed and checksummed on its own, so that a point read fetches one chunk (a page or two)
 * where the whole basement would be some 36 KB; {@link ChunkMap} says where each chunk lies.
 *
 * <p>Layout (big-endian): tag {@code 'B'} (1), codec id of the chunks (1), stamp (8), row count (4),
 * chunk count m (2), then m chunk records: CRC32C (4), the stamp again (8), flags (1; bit 0: stored
 * uncompressed), uncompressed length (4), stored length (4), stored bytes. A chunk's rows are whole
 * keys (every version of a key lies in one chunk) in the {@link RowFormat}. The stamp, drawn at
 * random for each version stored, tells a record read through the map of another version; the
 * checksum covers the block number (8) and the record after the checksum field, so that a damaged
 * record or one of another block does not pass either. The block holding this form is stored with
 * codec id 0: compression happens per chunk, inside it.
 *
 * <p>Codecs whose output grows a lot on small inputs (xz, deflate) get a single chunk.
 */
final class StoredBasement {
    static final byte TAG = 'B';
    /** Uncompressed bytes per chunk at which a chunk ends (at the next key). */
    static final int CHUNK_BYTES = 4 << 10;
    /** The block-level codec of a stored basement: none, its chunks being compressed already. */
    static final BlockCompressor BLOCK_CODEC = Compressors.forId(0);
    private static final int HEADER = 16;
    private static final int RECORD_HEADER = 21;
    private static final int FLAGS = 12;
    private static final int LENGTH = 13;
    private static final int STORED_LENGTH = 17;
    private static final int STORED_RAW = 1;
    private static final int MAX_CHUNKS = 0xffff;
    /** Most uncompressed bytes a basement's rows may take, as for any block. */
    private static final int MAX_ROW_BYTES = 64 << 20;

    private StoredBasement() {
    }

    /** Bytes per chunk for {@code codec} and {@code rowBytes} of rows. */
    private static int chunkBytes(BlockCompressor codec, int rowBytes) {
        String name = codec.name();
        if (!name.equals("lz4") && !name.equals("zstd") && !name.equals("none")) {
            return Integer.MAX_VALUE;
        }
        return Math.max(CHUNK_BYTES, rowBytes / (MAX_CHUNKS - 1) + 1);
    }

    /** The row positions at which chunks start (the first is 0), for {@code b}'s rows. */
    static int[] cuts(Basement b, BlockCompressor codec) {
        int count = b.count();
        if (count == 0) {
            return new int[] {0};
        }
        int target = chunkBytes(codec, b.bytes());
        int[] cuts = new int[8];
        int m = 1;
        int pos = 0;
        while (true) {
            long want = (long) b.offset(pos) + target;
            int p = b.firstRowAtOrPast(want);
            while (p < count && b.sameKey(p - 1, p)) {
                p++;
            }
            if (p >= count) {
                return Arrays.copyOf(cuts, m);
            }
            if (m == cuts.length) {
                cuts = Arrays.copyOf(cuts, m * 2);
            }
            cuts[m++] = p;
            pos = p;
        }
    }

    /** An upper bound of what {@link #write} produces for {@code b} cut at {@code cuts}. */
    static int sizeBound(Basement b, BlockCompressor codec, int[] cuts) {
        long size = HEADER;
        for (int c = 0; c < cuts.length; c++) {
            int len = chunkEnd(b, cuts, c) - chunkStart(b, cuts, c);
            size += RECORD_HEADER + Math.max(len, codec.maxCompressedLength(len));
        }
        return Math.toIntExact(size);
    }

    private static int chunkStart(Basement b, int[] cuts, int c) {
        return b.count() == 0 ? b.bytes() : b.offset(cuts[c]);
    }

    private static int chunkEnd(Basement b, int[] cuts, int c) {
        return c + 1 < cuts.length ? b.offset(cuts[c + 1]) : b.bytes();
    }

    /**
     * Writes {@code b}'s stored form, cut at {@code cuts}, to {@code out} (which has room for
     * {@link #sizeBound}), under a new stamp; returns its map.
     */
    static ChunkMap write(Basement b, long blockNumber, BlockCompressor codec, int[] cuts, ByteBuf out) {
        long stamp = ThreadLocalRandom.current().nextLong();
        int base = out.writerIndex();
        out.writeByte(TAG).writeByte(codec.id()).writeLong(stamp).writeInt(b.count()).writeShort(cuts.length);
        ByteBuffer rows = b.rowView();
        int[] starts = new int[cuts.length + 1];
        byte[][] separators = new byte[cuts.length - 1][];
        CRC32C crc = new CRC32C();
        for (int c = 0; c < cuts.length; c++) {
            int from = chunkStart(b, cuts, c);
            int len = chunkEnd(b, cuts, c) - from;
            if (c > 0) {
                separators[c - 1] = b.separatorBefore(cuts[c]);
            }
            int record = out.writerIndex();
            starts[c] = record - base;
            int dataAt = record + RECORD_HEADER;
            ByteBuffer src = rows.duplicate().limit(from + len).position(from);
            ByteBuffer dst = out.nioBuffer(dataAt, out.capacity() - dataAt);
            int stored = len == 0 || codec.id() == 0 ? len : codec.compress(src, dst);
            int flags = 0;
            if (stored >= len) { // not made smaller (or not compressed at all): kept as it is
                stored = len;
                flags = STORED_RAW;
                out.setBytes(dataAt, rows.duplicate().limit(from + len).position(from));
            }
            out.setInt(record, 0).setLong(record + 4, stamp).setByte(record + FLAGS, flags).setInt(record + LENGTH, len)
                    .setInt(record + STORED_LENGTH, stored);
            out.writerIndex(dataAt + stored);
            out.setInt(record, checksum(crc, blockNumber, out.nioBuffer(record + 4, RECORD_HEADER - 4 + stored)));
        }
        starts[cuts.length] = out.writerIndex() - base;
        return new ChunkMap(codec.id(), stamp, starts, separators);
    }

    private static int checksum(CRC32C crc, long blockNumber, ByteBuffer recordAfterCrc) {
        crc.reset();
        for (int shift = 56; shift >= 0; shift -= 8) {
            crc.update((int) (blockNumber >>> shift)); // big-endian, byte by byte: no buffer per chunk
        }
        crc.update(recordAfterCrc);
        return (int) crc.getValue();
    }

    /**
     * A stored basement read back: its rows in {@link Basement}'s in-memory form, and what its map
     * needs besides them ({@link #map}): where each chunk's rows start in {@code rows}.
     */
    record Parsed(ByteBuf rows, int codecId, long stamp, int[] starts, int[] rowStarts) {
        /** The map of this stored form, {@code b} being its rows indexed. */
        ChunkMap map(Basement b) {
            byte[][] separators = new byte[starts.length - 2][];
            for (int c = 1; c < rowStarts.length; c++) {
                int p = b.firstRowAtOrPast(rowStarts[c]);
                if (p < 1 || p >= b.count() || b.offset(p) != rowStarts[c] || b.sameKey(p - 1, p)) {
                    throw new IllegalArgumentException("chunk " + c + " does not start at a key");
                }
                separators[c - 1] = ChunkMap.separator(b.key(p - 1), b.key(p));
            }
            return new ChunkMap(codecId, stamp, starts, separators);
        }
    }

    /**
     * Decompresses the stored form in {@code in} (its readable bytes; not released) into memory
     * from {@code memory}: a 5-byte header (tag, row count) and the rows.
     *
     * @throws IllegalArgumentException if the bytes are not a well-formed stored basement
     */
    static Parsed read(ByteBuf in, NodeMemory memory) {
        int base = in.readerIndex();
        int end = in.writerIndex();
        if (end - base < HEADER || in.getByte(base) != TAG) {
            throw new IllegalArgumentException("not a basement node");
        }
        int codecId = in.getUnsignedByte(base + 1);
        long stamp = in.getLong(base + 2);
        int rowCount = in.getInt(base + 10);
        int m = in.getUnsignedShort(base + 14);
        if (m < 1 || m > (end - base - HEADER) / RECORD_HEADER) {
            throw new IllegalArgumentException("impossible chunk count " + m);
        }
        int[] starts = new int[m + 1];
        long rowBytes = 0;
        int at = base + HEADER;
        for (int c = 0; c < m; c++) {
            if (at + RECORD_HEADER > end) {
                throw new IllegalArgumentException("chunk " + c + " runs past the end");
            }
            int len = in.getInt(at + LENGTH);
            int stored = in.getInt(at + STORED_LENGTH);
            if (len < 0 || stored < 0 || (long) at + RECORD_HEADER + stored > end || in.getLong(at + 4) != stamp
                    || (in.getByte(at + FLAGS) & STORED_RAW) != 0 && stored != len) {
                throw new IllegalArgumentException("chunk " + c + " has impossible lengths");
            }
            starts[c] = at - base;
            rowBytes += len;
            at += RECORD_HEADER + stored;
        }
        if (at != end) {
            throw new IllegalArgumentException("trailing bytes after the last chunk");
        }
        if (rowBytes > MAX_ROW_BYTES) {
            throw new IllegalArgumentException("rows of " + rowBytes + " bytes");
        }
        starts[m] = end - base;
        BlockCompressor codec = m > 1 || rowBytes > 0 ? Compressors.forId(codecId) : BLOCK_CODEC;
        ByteBuf rows = memory.allocate(5 + (int) rowBytes);
        try {
            rows.writeByte(TAG).writeInt(rowCount);
            int[] rowStarts = new int[m];
            ByteBuffer src = NodeMemory.view(in);
            for (int c = 0; c < m; c++) {
                int record = base + starts[c];
                int len = in.getInt(record + LENGTH);
                int stored = in.getInt(record + STORED_LENGTH);
                int rowAt = rows.writerIndex();
                rowStarts[c] = rowAt;
                ByteBuffer from = src.duplicate().limit(record + RECORD_HEADER + stored).position(record + RECORD_HEADER);
                if ((in.getByte(record + FLAGS) & STORED_RAW) != 0) {
                    rows.writeBytes(from);
                } else {
                    codec.decompress(from, rows.nioBuffer(rowAt, len), len);
                    rows.writerIndex(rowAt + len);
                }
            }
            return new Parsed(rows, codecId, stamp, starts, rowStarts);
        } catch (RuntimeException e) {
            memory.release(rows);
            throw e;
        }
    }

    /**
     * Answers a point read from one chunk record read through {@code map}: the value of {@code key}
     * a snapshot at {@code snapshotTs} sees, null when it sees none, or {@link ChunkMap#STALE} when
     * the record is not of the map's version (another stamp) or does not pass its checksum (the
     * block changed, or is damaged: the caller reads the whole basement, whose block checksum tells
     * the two apart).
     *
     * @throws IllegalArgumentException if a record that passed its checksum is malformed
     */
    static byte[] get(ByteBuffer record, long blockNumber, ChunkMap map, byte[] key, long snapshotTs) {
        int n = record.remaining();
        if (n < RECORD_HEADER) {
            return ChunkMap.STALE;
        }
        int p = record.position();
        if (record.getLong(p + 4) != map.stamp
                || checksum(new CRC32C(), blockNumber, record.duplicate().position(p + 4)) != record.getInt(p)) {
            return ChunkMap.STALE;
        }
        boolean raw = (record.get(p + FLAGS) & STORED_RAW) != 0;
        int len = record.getInt(p + LENGTH);
        int stored = record.getInt(p + STORED_LENGTH);
        if (len < 0 || len > MAX_ROW_BYTES || stored != n - RECORD_HEADER || raw && stored != len) {
            throw new IllegalArgumentException("chunk record with impossible lengths");
        }
        ByteBuffer src = record.duplicate().position(p + RECORD_HEADER);
        ByteBuffer rows;
        if (raw) {
            rows = src.slice();
        } else {
            rows = ByteBuffer.allocate(len);
            Compressors.forId(map.codecId).decompress(src, rows, len);
            rows.flip();
        }
        return RowFormat.find(rows, key, snapshotTs);
    }
}
