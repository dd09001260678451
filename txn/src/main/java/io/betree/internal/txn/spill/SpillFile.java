package io.betree.internal.txn.spill;

import io.betree.internal.fault.BetreeIOException;
import io.betree.internal.fault.CorruptionException;
import io.betree.internal.log.CommitRecord.Op;
import io.betree.internal.storage.FileHandle;
import io.betree.internal.storage.StorageEnv;
import java.io.Closeable;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.zip.CRC32C;

/**
 * A temporary file of sorted runs of writes. A run is a sequence of blocks of about
 * {@link #BLOCK_BYTES}; a block is its payload length (4 bytes), the CRC32C of the payload (4) and
 * the payload: writes back to back, encoded as in a log commit record (index id, op code, key
 * length, key, value length or -1 for a delete, value; big-endian). The file is never synced: it does not outlive
 * the process that wrote it, and the log, not this file, makes a commit durable.
 *
 * <p>Not thread-safe: it belongs to one transaction. {@link #close()} deletes the file; idempotent.
 */
public final class SpillFile implements Closeable {
    /** Payload bytes a block collects before it is written. */
    static final int BLOCK_BYTES = 32 << 10;
    private static final int BLOCK_HEADER = 8;

    private final StorageEnv storage;
    private final Path path;
    private FileHandle handle;
    private long end;

    private SpillFile(StorageEnv storage, Path path, FileHandle handle) {
        this.storage = storage;
        this.path = path;
        this.handle = handle;
    }

    /** Creates an empty file at {@code path}, replacing one a crashed process may have left. */
    static SpillFile create(StorageEnv storage, Path path) {
        try {
            storage.delete(path);
            return new SpillFile(storage, path, storage.open(path));
        } catch (IOException e) {
            throw new BetreeIOException("creating the spill file " + path, e);
        }
    }

    /**
     * Appends the writes of {@code sorted} (ascending by index id and key, one write per key) as a
     * run; returns it, or null when {@code sorted} is empty.
     */
    SortedRun append(Iterator<Op> sorted) {
        List<Long> offsets = new ArrayList<>();
        List<Op> firsts = new ArrayList<>();
        // The block header's 8 bytes are reserved up front, so a block goes out in one write
        // from the buffer it was built in, which is then reused.
        ByteBuffer block = ByteBuffer.allocate(BLOCK_HEADER + BLOCK_BYTES + 1024).position(BLOCK_HEADER);
        Op last = null;
        long count = 0;
        while (sorted.hasNext()) {
            Op op = sorted.next();
            if (block.position() == BLOCK_HEADER) {
                offsets.add(end);
                firsts.add(op);
            }
            int size = op.encodedBytes();
            if (block.remaining() < size) {
                ByteBuffer bigger = ByteBuffer.allocate(Math.max(block.capacity() * 2, block.position() + size));
                block = bigger.put(block.flip());
            }
            block.putInt(op.indexId()).put(op.type()).putInt(op.key().length).put(op.key());
            if (op.value() == null) {
                block.putInt(-1);
            } else {
                block.putInt(op.value().length).put(op.value());
            }
            last = op;
            count++;
            if (block.position() - BLOCK_HEADER >= BLOCK_BYTES) {
                writeBlock(block);
            }
        }
        if (block.position() > BLOCK_HEADER) {
            writeBlock(block);
        }
        if (count == 0) {
            return null;
        }
        long[] starts = new long[offsets.size() + 1];
        for (int i = 0; i < offsets.size(); i++) {
            starts[i] = offsets.get(i);
        }
        starts[offsets.size()] = end;
        return new SortedRun(this, starts, firsts.toArray(new Op[0]), last, count);
    }

    /** Writes {@code block} (header space, then payload up to its position) and clears it for the next. */
    private void writeBlock(ByteBuffer block) {
        int length = block.position() - BLOCK_HEADER;
        CRC32C crc = new CRC32C();
        crc.update(block.duplicate().flip().position(BLOCK_HEADER));
        block.putInt(0, length).putInt(4, (int) crc.getValue()).flip();
        try {
            checkOpen().write(block, end);
        } catch (IOException e) {
            throw new BetreeIOException("writing the spill file " + path, e);
        }
        end += BLOCK_HEADER + length;
        block.clear().position(BLOCK_HEADER);
    }

    /** Reads and decodes the block at {@code offset}, which ends at {@code next}. */
    List<Op> readBlock(long offset, long next) {
        ByteBuffer in = ByteBuffer.allocate((int) (next - offset));
        try {
            checkOpen().readFully(in, offset);
        } catch (IOException e) {
            throw new BetreeIOException("reading the spill file " + path, e);
        }
        in.flip();
        int length = in.getInt();
        int stored = in.getInt();
        if (length != in.remaining()) {
            throw new CorruptionException(path, "spill block at offset " + offset + " holds " + length
                    + " bytes where " + in.remaining() + " were written");
        }
        CRC32C crc = new CRC32C();
        crc.update(in.duplicate());
        if ((int) crc.getValue() != stored) {
            throw new CorruptionException(path, "spill block at offset " + offset + " fails its checksum");
        }
        List<Op> ops = new ArrayList<>();
        while (in.hasRemaining()) {
            int indexId = in.getInt();
            byte type = in.get();
            byte[] key = new byte[in.getInt()];
            in.get(key);
            int valueLength = in.getInt();
            byte[] value = null;
            if (valueLength >= 0) {
                value = new byte[valueLength];
                in.get(value);
            }
            ops.add(new Op(indexId, type, key, value));
        }
        return ops;
    }

    private FileHandle checkOpen() {
        if (handle == null) {
            throw new IllegalStateException("spill file " + path + " is closed");
        }
        return handle;
    }

    /** Closes and deletes the file. */
    @Override
    public void close() {
        if (handle == null) {
            return;
        }
        FileHandle h = handle;
        handle = null;
        IOException failed = null;
        try {
            h.close();
        } catch (IOException e) {
            failed = e;
        }
        try {
            storage.delete(path);
        } catch (IOException e) {
            if (failed == null) {
                failed = e;
            } else {
                failed.addSuppressed(e);
            }
        }
        if (failed != null) {
            throw new BetreeIOException("deleting the spill file " + path, failed);
        }
    }
}
