package io.betree.internal.tree;

import io.betree.compression.BlockCompressor;
import io.betree.compression.CompressionFormatException;
import io.betree.compression.Compressors;
import io.betree.internal.memory.NodeMemory;
import io.netty.buffer.ByteBuf;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.zip.CRC32C;

/**
 * How a basement is stored (format version 8, docs/format.md): its rows cut, at key boundaries,
 * into chunks of about {@link #CHUNK_BYTES}, each compressed and checksummed alone, so that a point
 * read of a basement the cache lacks fetches the one chunk its key can be in ({@link ChunkMap})
 * instead of the whole block: a few KB where the whole basement is some 30 KB.
 *
 * <p>The block is stored uncompressed (the chunks are compressed): tag {@code 'K'} (1), the
 * version's stamp (8), row count (4), chunk count (2), then per chunk a record: the stamp again
 * (8), the codec's id (1), the chunk's row count (4), its length uncompressed (4) and stored (4), a
 * CRC32C (4) of the record's first 21 bytes and its stored bytes, then the stored bytes. The rows
 * of the chunks, in order, are the basement's rows in {@link Basement}'s layout. The stamp is
 * random for each version of a basement's contents, so that a map of another version is caught.
 * Basements of earlier versions (tag {@code 'B'}, compressed whole by the block's codec) are still
 * read.
 *
 * <p>An instance writes with one codec and leaves each map it makes with {@link RecentChunkMaps};
 * thread-safe.
 */
final class BasementChunks {
    static final byte TAG = 'K';
    /** Uncompressed bytes after which a chunk ends at the next key: a read of one or two 4 KiB pages. */
    static final int CHUNK_BYTES = 8192;
    static final int HEADER = 15;
    static final int RECORD_HEADER = 25;
    /** Checked bytes of a record before its CRC. */
    private static final int RECORD_CHECKED = 21;
    /**
     * The most bytes a basement's rows take: what a block's payload holds (docs/format.md, Limits),
     * as it did when a basement was stored whole. Reads check lengths a damaged block claims
     * against it.
     */
    private static final int MAX_ROW_BYTES = 64 << 20;

    private final BlockCompressor codec;
    private final RecentChunkMaps recent;

    /** Writes chunks compressed with {@code codec}, leaving their maps with {@code recent}. */
    BasementChunks(BlockCompressor codec, RecentChunkMaps recent) {
        this.codec = codec;
        this.recent = recent;
    }

    /** The first row of each chunk of {@code b}, then its row count. */
    private static int[] cuts(Basement b) {
        int count = b.count();
        int[] starts = new int[8];
        int m = 1; // starts[0] = 0
        int chunkStart = count == 0 ? 0 : b.rowOffset(0);
        for (int p = 1; p < count; p++) {
            int off = b.rowOffset(p);
            if (off - chunkStart >= CHUNK_BYTES && !b.sameKeyAsPrevious(p) && m < ChunkMap.MAX_CHUNKS) {
                if (m == starts.length) {
                    starts = Arrays.copyOf(starts, m * 2);
                }
                starts[m++] = p;
                chunkStart = off;
            }
        }
        starts = Arrays.copyOf(starts, m + 1);
        starts[m] = count;
        return starts;
    }

    private static int rowsStart(Basement b, int[] cuts, int j) {
        return cuts[j] < b.count() ? b.rowOffset(cuts[j]) : b.rowsEnd();
    }

    /**
     * The most bytes {@link #write} writes for {@code b}.
     *
     * @throws IllegalArgumentException if the rows take more than a block holds
     */
    int sizeBound(Basement b) {
        if (b.rowsEnd() > MAX_ROW_BYTES) {
            throw new IllegalArgumentException("basement " + b.blockNumber() + " holds " + b.rowsEnd()
                    + " bytes of rows, more than the " + (MAX_ROW_BYTES >> 20) + " MiB a block holds");
        }
        int[] cuts = cuts(b);
        long bound = HEADER;
        for (int j = 0; j + 1 < cuts.length; j++) {
            bound += RECORD_HEADER + codec.maxCompressedLength(rowsStart(b, cuts, j + 1) - rowsStart(b, cuts, j));
        }
        return Math.toIntExact(bound);
    }

    /**
     * Writes {@code b} in chunks as version {@code stamp} (not 0) into {@code out}, and leaves the
     * chunks' map with the recent maps.
     */
    void write(Basement b, ByteBuf out, long stamp) {
        int[] cuts = cuts(b);
        int m = cuts.length - 1;
        int start = out.writerIndex();
        out.writeByte(TAG).writeLong(stamp).writeInt(b.count()).writeShort(m);
        int[] offsets = new int[m + 1];
        List<byte[]> separators = new ArrayList<>(m - 1);
        ByteBuffer rows = b.rows();
        CRC32C crc = new CRC32C();
        for (int j = 0; j < m; j++) {
            int from = rowsStart(b, cuts, j);
            int to = rowsStart(b, cuts, j + 1);
            int record = out.writerIndex();
            offsets[j] = record - start;
            out.writeLong(stamp).writeByte(codec.id()).writeInt(cuts[j + 1] - cuts[j]).writeInt(to - from)
                    .writeInt(0).writeInt(0);
            int stored = 0;
            if (to > from) {
                int room = codec.maxCompressedLength(to - from);
                out.ensureWritable(room);
                ByteBuffer dst = out.nioBuffer(out.writerIndex(), room);
                stored = codec.compress(rows.duplicate().limit(to).position(from), dst);
                out.writerIndex(out.writerIndex() + stored);
            }
            out.setInt(record + 17, stored);
            crc.reset();
            crc.update(out.nioBuffer(record, RECORD_CHECKED));
            crc.update(out.nioBuffer(record + RECORD_HEADER, stored));
            out.setInt(record + RECORD_CHECKED, (int) crc.getValue());
            if (j > 0) {
                separators.add(b.separatorBefore(cuts[j]));
            }
        }
        offsets[m] = out.writerIndex() - start;
        recent.put(b.blockNumber(), ChunkMap.build(b.blockNumber(), stamp, offsets, separators));
    }

    /**
     * The rows of the stored basement {@code stored} (readable bytes, a block of tag {@link #TAG};
     * each chunk's CRC is checked too), decompressed into a new buffer of {@code memory} in
     * {@link Basement}'s layout, which the caller takes; {@code stored} stays the caller's.
     *
     * @throws IllegalArgumentException if the bytes are not a well-formed chunked basement
     */
    static ByteBuf decodeWhole(ByteBuf stored, NodeMemory memory) {
        ByteBuffer in = NodeMemory.view(stored);
        int start = stored.readerIndex();
        int end = stored.writerIndex();
        if (end - start < HEADER || in.get(start) != TAG) {
            throw new IllegalArgumentException("not a chunked basement");
        }
        long stamp = in.getLong(start + 1);
        int rows = in.getInt(start + 9);
        int m = in.getShort(start + 13) & 0xffff;
        long total = 0;
        int pos = start + HEADER;
        CRC32C crc = new CRC32C();
        for (int j = 0; j < m; j++) {
            if (pos + RECORD_HEADER > end || in.getLong(pos) != stamp || in.getInt(pos + 13) < 0
                    || in.getInt(pos + 17) < 0 || (long) pos + RECORD_HEADER + in.getInt(pos + 17) > end) {
                throw new IllegalArgumentException("chunk " + j + " of " + m + " is malformed");
            }
            if (!checksumHolds(in, pos, RECORD_HEADER + in.getInt(pos + 17), crc)) {
                throw new IllegalArgumentException("chunk " + j + " of " + m + " fails its checksum");
            }
            total += in.getInt(pos + 13);
            pos += RECORD_HEADER + in.getInt(pos + 17);
        }
        if (m < 1 || pos != end || rows < 0 || total > MAX_ROW_BYTES) {
            throw new IllegalArgumentException("chunked basement of " + m + " chunks, " + rows + " rows and "
                    + total + " bytes does not add up");
        }
        ByteBuf data = memory.allocate(Basement.HEADER + (int) total);
        try {
            data.writeByte(Basement.TAG).writeInt(rows);
            pos = start + HEADER;
            long rowsSeen = 0;
            for (int j = 0; j < m; j++) {
                rowsSeen += in.getInt(pos + 9);
                pos = decompressRecord(in, pos, data);
            }
            if (rowsSeen != rows) {
                throw new IllegalArgumentException("chunks hold " + rowsSeen + " rows, the basement " + rows);
            }
            return data;
        } catch (RuntimeException e) {
            memory.release(data);
            throw e;
        }
    }

    /**
     * The rows of one chunk record, {@code record}'s readable bytes, in {@link Basement}'s layout in
     * a new buffer of {@code memory} that the caller takes; null when the record is not one of
     * version {@code stamp} whole and intact (a map of another version, or damage: a read of the
     * whole block tells which).
     */
    static ByteBuf decodeChunk(ByteBuf record, long stamp, NodeMemory memory) {
        ByteBuffer in = NodeMemory.view(record);
        int pos = record.readerIndex();
        int length = record.readableBytes();
        if (length < RECORD_HEADER || in.getLong(pos) != stamp || in.getInt(pos + 17) != length - RECORD_HEADER
                || in.getInt(pos + 9) < 0 || in.getInt(pos + 13) < 0 || in.getInt(pos + 13) > MAX_ROW_BYTES) {
            return null;
        }
        if (!checksumHolds(in, pos, length, new CRC32C())) {
            return null;
        }
        ByteBuf data = memory.allocate(Basement.HEADER + in.getInt(pos + 13));
        try {
            data.writeByte(Basement.TAG).writeInt(in.getInt(pos + 9));
            decompressRecord(in, pos, data);
            return data;
        } catch (RuntimeException e) {
            memory.release(data);
            return null;
        }
    }

    /** Whether the CRC of the record of {@code length} bytes at {@code pos} of {@code in} holds. */
    private static boolean checksumHolds(ByteBuffer in, int pos, int length, CRC32C crc) {
        crc.reset();
        crc.update(in.duplicate().limit(pos + RECORD_CHECKED).position(pos));
        crc.update(in.duplicate().limit(pos + length).position(pos + RECORD_HEADER));
        return (int) crc.getValue() == in.getInt(pos + RECORD_CHECKED);
    }

    /** Decompresses the record at {@code pos} of {@code in} onto the end of {@code data}; returns where the next record starts. */
    private static int decompressRecord(ByteBuffer in, int pos, ByteBuf data) {
        int raw = in.getInt(pos + 13);
        int stored = in.getInt(pos + 17);
        int from = pos + RECORD_HEADER;
        if (raw > 0 || stored > 0) {
            BlockCompressor codec;
            try {
                codec = Compressors.forId(in.get(pos + 8) & 0xff);
            } catch (RuntimeException e) {
                throw new IllegalArgumentException("chunk compressed by unknown codec " + (in.get(pos + 8) & 0xff), e);
            }
            try {
                codec.decompress(in.duplicate().limit(from + stored).position(from),
                        data.nioBuffer(data.writerIndex(), raw), raw);
            } catch (CompressionFormatException e) {
                throw new IllegalArgumentException("chunk does not decompress: " + e.getMessage(), e);
            }
            data.writerIndex(data.writerIndex() + raw);
        }
        return from + stored;
    }
}
