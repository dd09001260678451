package io.betree.internal.tree;

import static io.betree.internal.tree.Basement.EXPIRES;
import static io.betree.internal.tree.Basement.HAS_TS;
import static io.betree.internal.tree.Basement.HEADER;
import static io.betree.internal.tree.Basement.ROW_HEADER;
import static io.betree.internal.tree.Basement.TAG;
import static io.betree.internal.tree.Basement.TOMBSTONE;
import static io.betree.internal.tree.Basement.flags;
import static io.betree.internal.tree.Basement.keyLength;
import static io.betree.internal.tree.Basement.rowLength;
import static io.betree.internal.tree.Basement.tsBytes;

import io.betree.internal.memory.NodeMemory;
import io.netty.buffer.ByteBuf;
import java.nio.ByteBuffer;

/** Reads a stored basement ({@link Basement}, docs/format.md) into one: checks and indexes its rows. Stateless. */
final class BasementLoader {
    private BasementLoader() {
    }

    /**
     * Takes ownership of {@code stored}, a stored basement of either form (chunked, or whole as
     * versions before 8 wrote it), and makes it a basement that writes with {@code chunks}.
     *
     * @throws IllegalArgumentException if the bytes are not a well-formed basement
     */
    static Basement loadStored(long blockNumber, ByteBuf stored, NodeMemory memory, BasementChunks chunks) {
        if (stored.readableBytes() == 0 || stored.getByte(stored.readerIndex()) != BasementChunks.TAG) {
            return load(blockNumber, stored, memory, chunks);
        }
        ByteBuf data;
        try {
            data = BasementChunks.decodeWhole(stored, memory);
        } finally {
            memory.release(stored);
        }
        return load(blockNumber, data, memory, chunks);
    }

    /**
     * Takes ownership of {@code data}, a basement in {@link Basement}'s layout, and indexes it. Lengths and flags are
     * checked, so that no row reaches outside the block; the order of the rows is not: the block's
     * checksum already guards the bytes, order is what the basement's writer keeps (and
     * {@link TreeChecker} verifies), and comparing every row with the one before was a sixth of a
     * flusher's time in an iiBench load whose internal nodes do not all fit in the cache.
     *
     * @throws IllegalArgumentException if the bytes are not a well-formed basement
     */
    static Basement load(long blockNumber, ByteBuf data, NodeMemory memory, BasementChunks chunks) {
        ByteBuf index = null;
        try {
            if (data.readableBytes() < HEADER || data.getByte(0) != TAG) {
                throw new IllegalArgumentException("not a basement node");
            }
            int n = data.getInt(1);
            if (n < 0 || n > data.readableBytes() / ROW_HEADER) {
                throw new IllegalArgumentException("impossible row count " + n);
            }
            index = memory.allocate(Math.max(4, n * 4));
            ByteBuffer view = NodeMemory.view(data);
            int off = HEADER;
            int end = data.writerIndex();
            for (int i = 0; i < n; i++) {
                if (off + ROW_HEADER > end) {
                    throw new IllegalArgumentException("row " + i + " runs past the end");
                }
                int flags = flags(view, off);
                int vl = view.getInt(off + 3);
                if (vl < 0 || (flags & ~(TOMBSTONE | HAS_TS | EXPIRES)) != 0
                        || (flags & EXPIRES) != 0 && ((flags & TOMBSTONE) != 0 || vl < Expiry.BYTES)
                        || (long) off + ROW_HEADER + tsBytes(flags) + keyLength(view, off) + vl > end) {
                    throw new IllegalArgumentException("row " + i + " has impossible lengths or flags");
                }
                index.writeInt(off);
                off += rowLength(view, off);
            }
            if (off != end) {
                throw new IllegalArgumentException("trailing bytes after the last row");
            }
            return new Basement(blockNumber, memory, chunks, data, index, n);
        } catch (RuntimeException e) {
            memory.release(data);
            memory.release(index);
            throw e;
        }
    }
}
