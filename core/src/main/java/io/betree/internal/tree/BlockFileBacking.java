package io.betree.internal.tree;

import io.betree.compression.BlockCompressor;
import io.betree.internal.cache.BackingStore;
import io.betree.internal.fault.BetreeIOException;
import io.betree.internal.fault.CorruptionException;
import io.betree.internal.memory.NodeMemory;
import io.betree.internal.storage.BlockFile;
import io.netty.buffer.ByteBuf;
import java.io.IOException;
import java.nio.ByteBuffer;

/**
 * The node cache's backing store over a {@link BlockFile}: blocks are read into and written from
 * the cache's off-heap memory, and I/O failures become {@link BetreeIOException}s that name the
 * block and the file. Thread-safe, as the block file is.
 */
public final class BlockFileBacking implements BackingStore {
    private final BlockFile file;
    private final NodeMemory memory;

    /** A store that reads {@code file}'s blocks into buffers of {@code memory}. */
    public BlockFileBacking(BlockFile file, NodeMemory memory) {
        this.file = file;
        this.memory = memory;
    }

    @Override
    public ByteBuf fetch(long blockNumber) {
        return fetchPrefix(blockNumber, Integer.MAX_VALUE);
    }

    @Override
    public ByteBuf fetchPrefix(long blockNumber, int bytes) {
        ByteBuf[] holder = new ByteBuf[1];
        int[] length = new int[1];
        try {
            file.readPrefix(blockNumber, bytes, size -> {
                holder[0] = memory.allocate(size);
                length[0] = size;
                return holder[0].nioBuffer(0, size);
            });
        } catch (IOException e) {
            memory.release(holder[0]);
            throw new BetreeIOException("reading block " + blockNumber + " of " + file.path(), e);
        } catch (IllegalArgumentException e) {
            memory.release(holder[0]);
            throw new CorruptionException(file.path(), blockNumber,
                    "a stored pointer names a block that does not exist (" + e.getMessage() + ")", e);
        } catch (RuntimeException e) {
            memory.release(holder[0]);
            throw e;
        }
        return holder[0].writerIndex(length[0]);
    }

    @Override
    public ByteBuf fetchRange(long blockNumber, int from, int length) {
        ByteBuf[] holder = new ByteBuf[1];
        try {
            ByteBuffer read = file.readRange(blockNumber, from, length, size -> {
                holder[0] = memory.allocate(size);
                return holder[0].nioBuffer(0, size);
            });
            if (read == null) {
                memory.release(holder[0]);
                return memory.allocate(1); // none of it: the caller's hint was out of date
            }
            return holder[0].writerIndex(length);
        } catch (IOException e) {
            memory.release(holder[0]);
            throw new BetreeIOException("reading part of block " + blockNumber + " of " + file.path(), e);
        } catch (RuntimeException e) {
            memory.release(holder[0]);
            throw e;
        }
    }

    @Override
    public void writeBack(long blockNumber, ByteBuf image, BlockCompressor codec) {
        try {
            file.write(blockNumber, payload(image), codec);
        } catch (IOException e) {
            throw writeFailed(blockNumber, e);
        }
    }

    @Override
    public boolean writeCheckpointImage(long blockNumber, ByteBuf image, BlockCompressor codec) {
        try {
            return file.writeForCheckpoint(blockNumber, payload(image), codec);
        } catch (IOException e) {
            throw writeFailed(blockNumber, e);
        }
    }

    private static ByteBuffer payload(ByteBuf image) {
        return image.nioBuffer(image.readerIndex(), image.readableBytes());
    }

    private BetreeIOException writeFailed(long blockNumber, IOException e) {
        return new BetreeIOException("writing block " + blockNumber + " of " + file.path(), e);
    }

    @Override
    public String name() {
        return file.path().getFileName().toString();
    }
}
