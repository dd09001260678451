package io.betree.internal.tree;

import io.betree.compression.BlockCompressor;
import io.betree.compression.Compressors;
import io.betree.internal.memory.NodeMemory;
import io.netty.buffer.ByteBuf;
import java.nio.ByteBuffer;
import java.util.concurrent.ThreadLocalRandom;

/**
 * The stored form of a {@link Basement}: its rows cut into segments of about
 * {@link #SEGMENT_BYTES} each, compressed one by one, behind a {@link SegmentLayout}. A point read
 * that knows the layout reads one segment; everything else reads the block whole. The block itself
 * is stored uncompressed, so an offset in the payload is an offset in the file.
 *
 * <p>Form: tag {@code 'S'} (1), the layout, then each segment: the layout's write id (8) and its
 * stored bytes (the rows, compressed with the layout's codec, or as they are when that did not make
 * them smaller). A key's versions never straddle two segments.
 */
final class SegmentedBasement {
    static final byte TAG = 'S';
    /**
     * Uncompressed bytes a segment grows to before the next one starts (a row or a key's versions
     * may make it longer). RocksDB's data blocks are 4 KiB; a segment compresses to about half,
     * and a point read takes one or two pages of the file.
     */
    static final int SEGMENT_BYTES = 4096;
    private static final int BASEMENT_HEADER = 5;

    private SegmentedBasement() {
    }

    /**
     * How many bytes of rows a segment compressed with {@code codec} holds: {@link #SEGMENT_BYTES},
     * except for xz, whose encoder takes its time to set up for every call (a model-based test run
     * spent minutes in it at 4 KiB) and which is picked for size, not for point reads: one segment
     * per basement.
     */
    static int segmentBytes(BlockCompressor codec) {
        return "xz".equals(codec.name()) ? Integer.MAX_VALUE : SEGMENT_BYTES;
    }

    /**
     * The rows at which segments of {@code b}, compressed with {@code codec}, start (row 0 first);
     * none for an empty basement.
     */
    static int[] cuts(Basement b, BlockCompressor codec) {
        int segmentBytes = segmentBytes(codec);
        int n = b.count();
        int[] cuts = new int[Math.max(1, n)];
        int count = 0;
        int start = BASEMENT_HEADER;
        for (int p = 0; p < n; p++) {
            int off = b.rowOffset(p);
            if (p == 0 || (off - start >= segmentBytes && !b.sameKeyAs(p - 1, p))) {
                cuts[count++] = p;
                start = off;
            }
        }
        return java.util.Arrays.copyOf(cuts, count);
    }

    /** Upper bound of the bytes {@link #write} produces for {@code b} cut at {@code cuts}. */
    static int sizeBound(Basement b, int[] cuts, BlockCompressor codec) {
        long size = 1 + layoutBound(b, cuts);
        for (int s = 0; s < cuts.length; s++) {
            size += SegmentLayout.SEGMENT_PREFIX + Math.max(rawLength(b, cuts, s),
                    codec.maxCompressedLength(rawLength(b, cuts, s)));
        }
        return (int) Math.min(Integer.MAX_VALUE - 8, size);
    }

    private static long layoutBound(Basement b, int[] cuts) {
        byte[][] keys = firstKeys(b, cuts);
        return SegmentLayout.serializedSize(keys);
    }

    private static byte[][] firstKeys(Basement b, int[] cuts) {
        byte[][] keys = new byte[cuts.length][];
        for (int s = 0; s < cuts.length; s++) {
            keys[s] = b.key(cuts[s]);
        }
        return keys;
    }

    private static int rowStart(Basement b, int[] cuts, int s) {
        return b.rowOffset(cuts[s]);
    }

    private static int rowEnd(Basement b, int[] cuts, int s) {
        return s + 1 < cuts.length ? b.rowOffset(cuts[s + 1]) : b.bytes();
    }

    private static int rawLength(Basement b, int[] cuts, int s) {
        return rowEnd(b, cuts, s) - rowStart(b, cuts, s);
    }

    /** A fresh write id: random, so that an old layout never vouches for a new version's bytes. */
    static long newWriteId() {
        return ThreadLocalRandom.current().nextLong();
    }

    /**
     * Writes the stored form of {@code b}, cut at {@code cuts}, to {@code out}, which has at least
     * {@link #sizeBound} bytes writable; returns its layout.
     */
    static SegmentLayout write(Basement b, int[] cuts, BlockCompressor codec, long writeId, ByteBuf out) {
        byte[][] keys = firstKeys(b, cuts);
        int n = cuts.length;
        int[] rows = new int[n];
        int[] raw = new int[n];
        int[] stored = new int[n];
        int[] crcs = new int[n];
        int layoutAt = out.writerIndex() + 1;
        int at = layoutAt + SegmentLayout.serializedSize(keys);
        ByteBuffer src = b.rowsView();
        for (int s = 0; s < n; s++) {
            rows[s] = (s + 1 < n ? cuts[s + 1] : b.count()) - cuts[s];
            raw[s] = rawLength(b, cuts, s);
            ByteBuffer segment = src.duplicate().limit(rowEnd(b, cuts, s)).position(rowStart(b, cuts, s));
            out.setLong(at, writeId);
            ByteBuffer dst = out.nioBuffer(at + SegmentLayout.SEGMENT_PREFIX,
                    Math.max(raw[s], codec.maxCompressedLength(raw[s])));
            int length = codec.id() == 0 ? raw[s] : codec.compress(segment.duplicate(), dst.duplicate());
            if (length >= raw[s]) {
                dst.duplicate().put(segment);
                length = raw[s];
            }
            stored[s] = length;
            crcs[s] = SegmentLayout.crc(out.nioBuffer(at, SegmentLayout.SEGMENT_PREFIX + length));
            at += SegmentLayout.SEGMENT_PREFIX + length;
        }
        SegmentLayout layout = SegmentLayout.of(codec.id(), b.count(), writeId, keys, rows, raw, stored, crcs);
        out.writeByte(TAG);
        layout.write(out);
        out.writerIndex(at);
        return layout;
    }

    /**
     * Reads the layout at the front of a stored basement ({@code payload}, position at its tag),
     * checking it against the payload's length.
     *
     * @throws IllegalArgumentException if the form is malformed
     */
    static SegmentLayout layout(ByteBuf payload) {
        ByteBuf in = payload.duplicate();
        if (in.readableBytes() < 1 || in.readByte() != TAG) {
            throw new IllegalArgumentException("not a basement node");
        }
        SegmentLayout layout = SegmentLayout.read(in, payload.readableBytes());
        if (layout.payloadBytes() != payload.readableBytes()) {
            throw new IllegalArgumentException("trailing bytes after the last segment");
        }
        return layout;
    }

    /**
     * The rows of the stored basement {@code payload} (laid out by {@code layout}) in the form
     * {@link Basement#load} takes, in a buffer of {@code memory} that the caller owns.
     *
     * @throws IllegalArgumentException if a segment is malformed
     */
    static ByteBuf rows(ByteBuf payload, SegmentLayout layout, NodeMemory memory) {
        long total = BASEMENT_HEADER;
        for (int s = 0; s < layout.segmentCount(); s++) {
            total += layout.rawLength(s);
        }
        if (total > Integer.MAX_VALUE - 8) {
            throw new IllegalArgumentException("segments too long");
        }
        ByteBuf out = memory.allocate((int) total);
        try {
            out.writeByte(Basement.TAG).writeInt(layout.rowCount);
            BlockCompressor codec = null;
            for (int s = 0; s < layout.segmentCount(); s++) {
                int at = payload.readerIndex() + layout.offset(s);
                if (payload.getLong(at) != layout.writeId) {
                    throw new IllegalArgumentException("segment " + s + " belongs to another write");
                }
                ByteBuffer src = payload.nioBuffer(at + SegmentLayout.SEGMENT_PREFIX, layout.storedLength(s));
                ByteBuffer dst = out.nioBuffer(out.writerIndex(), layout.rawLength(s));
                if (layout.compressed(s)) {
                    if (codec == null) {
                        codec = Compressors.forId(layout.codecId);
                    }
                    codec.decompress(src, dst, layout.rawLength(s));
                } else {
                    dst.put(src);
                }
                out.writerIndex(out.writerIndex() + layout.rawLength(s));
            }
            return out;
        } catch (RuntimeException e) {
            memory.release(out);
            throw e;
        }
    }

    /**
     * The rows of segment {@code s}, read as its {@link SegmentLayout#span} ({@code span}, already
     * checked with {@link SegmentLayout#matches}), written to {@code rows} (which has room for
     * their uncompressed length) and returned as a buffer over just them.
     */
    static ByteBuffer segmentRows(SegmentLayout layout, int s, ByteBuffer span, ByteBuffer rows) {
        ByteBuffer src = span.duplicate();
        src.position(src.position() + SegmentLayout.SEGMENT_PREFIX);
        rows.clear().limit(layout.rawLength(s));
        if (layout.compressed(s)) {
            Compressors.forId(layout.codecId).decompress(src, rows, layout.rawLength(s));
        } else {
            rows.put(src);
        }
        return rows.flip();
    }
}
