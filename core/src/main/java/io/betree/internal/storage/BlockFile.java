package io.betree.internal.storage;

import io.betree.CorruptionException;
import io.betree.compression.BlockCompressor;
import java.io.Closeable;
import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.Objects;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.IntFunction;

/**
 * One file holding many logical blocks, each compressed and checksummed, placed copy-on-write and
 * found through a block translation table that every {@link #checkpoint} makes durable. The on-disk
 * format, the free-space rules and the crash analysis are in {@code docs/format.md}.
 *
 * <p>Copy-on-write: a write never overwrites space that the last durable checkpoint (or one in
 * progress) references. Space used only since the last checkpoint is reused as soon as its block is
 * rewritten or freed; space the last checkpoint references becomes reusable once the next checkpoint
 * is durable. After a crash, {@link #open} therefore finds the last checkpoint exactly as it was.
 *
 * <p>Thread safety: every method may be called concurrently. The translation table and the free-space
 * map are guarded by one lock held only for bookkeeping; compression, checksums and file I/O run
 * outside it, so reads and writes of different blocks proceed in parallel. A read that races with a
 * rewrite of the same block returns either version. Checkpoints are serialized with each other; one
 * captures the table as of its start, and writes that complete later are part of the next one.
 *
 * <p>Errors: I/O failures are {@link IOException}s; damaged data is a {@link CorruptionException}
 * naming the file and, for a block, its number and offset; misuse (unknown block numbers, oversized
 * payloads, use after close) is {@link IllegalArgumentException} or {@link IllegalStateException}.
 * A failed {@code sync}, or a failure while the header is written, leaves the state on disk unknown
 * (after a failed fsync the kernel may have dropped written pages), so the file then refuses further
 * writes and checkpoints with an {@code IOException}; reopening recovers the last durable checkpoint.
 */
public final class BlockFile implements Closeable {

    /** Largest payload of one block in bytes (64 MiB). */
    public static final int MAX_BLOCK_SIZE = BlockFormat.MAX_BLOCK_SIZE;

    /** Largest root record in bytes (16 MiB). */
    public static final int MAX_ROOT_RECORD_SIZE = BlockFormat.MAX_ROOT_RECORD_SIZE;

    /** Suffix of the temporary file a new block file is built in before it is renamed into place. */
    static final String CREATING_SUFFIX = ".creating";

    private static final int TABLE_SCRATCH_SIZE = 1 << 20;
    /** Reads retried when a block moved while being read (a concurrent rewrite), before giving up. */
    private static final int READ_RETRIES = 8;

    private final Path path;
    private final FileHandle file;

    /** Serializes checkpoints with each other and with close. */
    private final ReentrantLock checkpointLock = new ReentrantLock();
    /** Guards every field below. */
    private final ReentrantLock lock = new ReentrantLock();
    private final TranslationTable table;
    private final ExtentAllocator allocator;
    /** The table of the last durable checkpoint; its extents are never overwritten. */
    private TableSnapshot durable;
    private long durableTableOffset;
    private long durableTableLength;
    private int durableSlot;
    private long durableSequence;
    /** The table a checkpoint in progress is writing, or null; its extents are never overwritten. */
    private TableSnapshot pending;
    /** Read-only root record of the last durable checkpoint, or null. */
    private ByteBuffer rootRecord;

    /** Set when the state on disk became unknown; writes and checkpoints then fail with it. */
    private volatile IOException failure;
    private volatile boolean closed;

    private BlockFile(Path path, FileHandle file, FileHeader header, int slot, TableSnapshot.Loaded loaded,
            ExtentAllocator allocator) {
        this.path = path;
        this.file = file;
        this.table = new TranslationTable(loaded.table());
        this.allocator = allocator;
        this.durable = loaded.table();
        this.durableTableOffset = header.tableOffset();
        this.durableTableLength = header.tableLength();
        this.durableSlot = slot;
        this.durableSequence = header.sequence();
        this.rootRecord = loaded.root() == null ? null : loaded.root().asReadOnlyBuffer();
    }

    /**
     * Opens the block file at {@code path}, creating it with an empty checkpoint if it does not exist.
     * A new file is built under a temporary name, synced and renamed into place, so a crash during
     * creation never leaves a half-made file at {@code path}. On open, the valid header with the
     * highest checkpoint sequence wins, and space beyond that checkpoint's last extent (writes that
     * never became part of a checkpoint) is truncated away.
     *
     * @throws CorruptionException if the file is not a block file or neither header slot is usable
     * @throws io.betree.BetreeException if the file was written by a newer format version
     * @throws IOException if the file cannot be read, created or opened
     */
    public static BlockFile open(StorageEnv env, Path path) throws IOException {
        Objects.requireNonNull(env, "env");
        Objects.requireNonNull(path, "path");
        if (!env.exists(path)) {
            BlockFileLoader.create(env, path);
        }
        FileHandle file = env.open(path);
        try {
            return BlockFileLoader.load(path, file, (header, slot, loaded, allocator) ->
                    new BlockFile(path, file, header, slot, loaded, allocator));
        } catch (IOException | RuntimeException | Error e) {
            try {
                file.close();
            } catch (IOException suppressed) {
                e.addSuppressed(suppressed);
            }
            throw e;
        }
    }

    /** The path of the file. */
    public Path path() {
        return path;
    }

    /** Allocates an unused logical block number (the lowest free one). */
    public long allocateBlockNumber() {
        checkOpen();
        lock.lock();
        try {
            return table.allocate();
        } finally {
            lock.unlock();
        }
    }

    /**
     * Frees {@code blockNumber}; its space is reused at once if no checkpoint references it, else
     * after the next checkpoint. The number itself may be handed out again at once.
     *
     * @throws IllegalArgumentException if the number is not allocated
     */
    public void freeBlockNumber(long blockNumber) {
        checkOpen();
        lock.lock();
        try {
            long offset = table.offset(blockNumber);
            int length = table.length(blockNumber);
            table.free(blockNumber);
            releaseIfUnpinned(blockNumber, offset, length);
        } finally {
            lock.unlock();
        }
    }

    /** Whether {@code blockNumber} is allocated. */
    public boolean isAllocated(long blockNumber) {
        lock.lock();
        try {
            return table.isAllocated(blockNumber);
        } finally {
            lock.unlock();
        }
    }

    /**
     * File offset of the current version of {@code blockNumber}, for diagnostics and for tests that
     * damage specific blocks; -1 if the number is not allocated, 0 if it was never written.
     */
    public long blockOffset(long blockNumber) {
        lock.lock();
        try {
            return table.offset(blockNumber);
        } finally {
            lock.unlock();
        }
    }

    /**
     * Stores the remaining bytes of {@code payload} (which is not modified, position included) as the
     * new version of {@code blockNumber}, compressed with {@code codec}. The payload is stored
     * uncompressed (codec id 0) when the codec does not make it smaller. The new version goes to free
     * space; the previous one is released unless a checkpoint still references it.
     *
     * @throws IllegalArgumentException if the number is not allocated or the payload exceeds
     *     {@link #MAX_BLOCK_SIZE}
     * @throws IOException if the write fails; the block then keeps its previous version
     */
    public void write(long blockNumber, ByteBuffer payload, BlockCompressor codec) throws IOException {
        Objects.requireNonNull(payload, "payload");
        Objects.requireNonNull(codec, "codec");
        checkWritable();
        int length = payload.remaining();
        if (length > MAX_BLOCK_SIZE) {
            throw new IllegalArgumentException("block of " + length + " bytes exceeds the maximum of "
                    + MAX_BLOCK_SIZE);
        }
        int codecId = codec.id();
        if (codecId < 0 || codecId > 255) {
            throw new IllegalArgumentException("codec id " + codecId + " outside 0..255");
        }
        if (!isAllocated(blockNumber)) {
            throw new IllegalArgumentException("block " + blockNumber + " is not allocated in " + path);
        }
        int bound = codecId == 0 || length == 0 ? length : Math.max(length, codec.maxCompressedLength(length));
        ByteBuffer block = ScratchBuffers.take(BlockHeader.SIZE + bound);
        try {
            int diskLength = BlockEncoding.encode(block, blockNumber, payload, codec, bound);
            store(blockNumber, block, diskLength);
        } finally {
            ScratchBuffers.giveBack(block);
        }
    }

    /** Writes an encoded block to fresh space and makes it the block's current version. */
    private void store(long blockNumber, ByteBuffer block, int diskLength) throws IOException {
        long offset;
        lock.lock();
        try {
            offset = allocator.allocate(diskLength);
        } finally {
            lock.unlock();
        }
        try {
            file.write(block, offset);
        } catch (IOException | RuntimeException e) {
            lock.lock();
            try {
                allocator.release(offset, diskLength);
            } finally {
                lock.unlock();
            }
            throw e;
        }
        lock.lock();
        try {
            if (!table.isAllocated(blockNumber)) {
                allocator.release(offset, diskLength);
                throw new IllegalStateException("block " + blockNumber + " was freed while being written");
            }
            long previous = table.offset(blockNumber);
            int previousLength = table.length(blockNumber);
            table.set(blockNumber, offset, diskLength);
            releaseIfUnpinned(blockNumber, previous, previousLength);
        } finally {
            lock.unlock();
        }
    }

    /**
     * Reads the current version of {@code blockNumber}, verifies it and decompresses it into
     * {@code allocator.apply(uncompressedLength)}, which must return a buffer with at least that many
     * bytes remaining. The allocator is called only after the stored bytes passed their checksum.
     *
     * @return the allocator's buffer, flipped so that it holds the block's bytes
     * @throws IllegalArgumentException if the number is not allocated or was never written
     * @throws CorruptionException if the stored block is damaged
     * @throws IOException if reading fails
     */
    public ByteBuffer read(long blockNumber, IntFunction<ByteBuffer> allocator) throws IOException {
        Objects.requireNonNull(allocator, "allocator");
        checkOpen();
        for (int attempt = 0; ; attempt++) {
            long offset;
            int diskLength;
            long releases;
            lock.lock();
            try {
                offset = table.offset(blockNumber);
                diskLength = table.length(blockNumber);
                releases = this.allocator.releaseCount();
            } finally {
                lock.unlock();
            }
            if (offset == TranslationTable.FREE) {
                throw new IllegalArgumentException("block " + blockNumber + " is not allocated in " + path);
            }
            if (offset == TranslationTable.UNWRITTEN) {
                throw new IllegalArgumentException("block " + blockNumber + " has not been written in " + path);
            }
            ByteBuffer raw = ScratchBuffers.take(diskLength).limit(diskLength);
            try {
                String problem = null;
                Throwable cause = null;
                BlockHeader.Fields fields = null;
                try {
                    file.readFully(raw, offset);
                    fields = BlockHeader.verify(raw, diskLength, blockNumber);
                } catch (EOFException e) {
                    problem = "the file ends inside the block";
                    cause = e;
                } catch (InvalidDataException e) {
                    problem = e.getMessage();
                }
                if (problem != null) {
                    if (attempt < READ_RETRIES && spaceReleasedSince(releases)) {
                        continue; // rewritten while we read: its old space may already hold other data
                    }
                    throw new CorruptionException(path, blockNumber, offset, problem, cause);
                }
                return BlockEncoding.decode(path, blockNumber, offset, raw, fields, allocator);
            } finally {
                ScratchBuffers.giveBack(raw);
            }
        }
    }

    /** Whether any extent was released since the release count was {@code releases}. */
    private boolean spaceReleasedSince(long releases) {
        lock.lock();
        try {
            return allocator.releaseCount() != releases;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Makes the current state durable: writes the translation table and {@code rootRecord} to free
     * space, syncs, writes the header slot not holding the last checkpoint, and syncs again. A crash
     * at any moment leaves either the previous or the new checkpoint intact. Afterwards the space
     * only the previous checkpoint referenced is reusable, and a free tail is truncated away.
     *
     * @param rootRecord the caller's catalog (remaining bytes, not consumed, copied), or {@code null}
     * @throws IllegalArgumentException if the root record exceeds {@link #MAX_ROOT_RECORD_SIZE}
     * @throws IOException if the checkpoint could not be made durable; the previous one stays in force
     */
    public void checkpoint(ByteBuffer rootRecord) throws IOException {
        ByteBuffer root = null;
        if (rootRecord != null) {
            if (rootRecord.remaining() > MAX_ROOT_RECORD_SIZE) {
                throw new IllegalArgumentException("root record of " + rootRecord.remaining()
                        + " bytes exceeds the maximum of " + MAX_ROOT_RECORD_SIZE);
            }
            root = ByteBuffer.allocate(rootRecord.remaining()).put(rootRecord.duplicate()).flip().asReadOnlyBuffer();
        }
        checkpointLock.lock();
        try {
            checkWritable();
            runCheckpoint(root);
        } finally {
            checkpointLock.unlock();
        }
    }

    private void runCheckpoint(ByteBuffer root) throws IOException {
        TableSnapshot snapshot;
        long tableOffset;
        long tableLength;
        long sequence;
        int slot;
        long allocatedEnd;
        lock.lock();
        try {
            snapshot = table.snapshot();
            tableLength = snapshot.encodedLength(root == null ? -1 : root.remaining());
            tableOffset = allocator.allocate(tableLength);
            pending = snapshot;
            sequence = durableSequence + 1;
            slot = 1 - durableSlot;
            allocatedEnd = allocator.end();
        } finally {
            lock.unlock();
        }
        boolean unknownState = false;
        try {
            ByteBuffer scratch = ScratchBuffers.take(TABLE_SCRATCH_SIZE);
            int crc;
            try {
                crc = snapshot.writeTo(file, tableOffset, sequence, root, scratch);
            } finally {
                ScratchBuffers.giveBack(scratch);
            }
            unknownState = true;
            file.sync();
            FileHeader header = new FileHeader(sequence, tableOffset, tableLength, crc,
                    root == null ? 0 : tableOffset + TableSnapshot.PREFIX_SIZE, root == null ? -1 : root.remaining(),
                    snapshot.size(), snapshot.entryCount(), allocatedEnd);
            file.write(header.encode(), (long) slot * BlockFormat.HEADER_SLOT_SIZE);
            file.sync();
        } catch (IOException | RuntimeException e) {
            abandonCheckpoint(snapshot, tableOffset, tableLength, unknownState ? e : null);
            throw e;
        }
        completeCheckpoint(snapshot, tableOffset, tableLength, sequence, slot, root);
    }

    /**
     * Cleans up after a failed checkpoint. Before the first sync nothing the checkpoint wrote can be
     * referenced by a header, so its table region and the versions only it pinned are released; after
     * that the file is marked failed ({@code failure}) and the attempt stays pinned, since its header
     * may have reached the disk.
     */
    private void abandonCheckpoint(TableSnapshot snapshot, long tableOffset, long tableLength, Throwable failure) {
        lock.lock();
        try {
            if (failure != null) {
                this.failure = failure instanceof IOException io ? io
                        : new IOException("checkpoint failed: " + failure, failure);
                return;
            }
            pending = null;
            allocator.release(tableOffset, tableLength);
            for (int b = 0; b < snapshot.size(); b++) {
                long offset = snapshot.offsets()[b];
                if (isExtent(offset) && offset != table.offset(b) && offset != durable.offset(b)) {
                    allocator.release(offset, snapshot.lengths()[b]);
                }
            }
        } finally {
            lock.unlock();
        }
    }

    /** Installs a durable checkpoint: releases what only its predecessor referenced, then trims the tail. */
    private void completeCheckpoint(TableSnapshot snapshot, long tableOffset, long tableLength, long sequence,
            int slot, ByteBuffer root) {
        lock.lock();
        try {
            TableSnapshot previous = durable;
            for (int b = 0; b < previous.size(); b++) {
                long offset = previous.offsets()[b];
                if (isExtent(offset) && offset != snapshot.offset(b) && offset != table.offset(b)) {
                    allocator.release(offset, previous.lengths()[b]);
                }
            }
            allocator.release(durableTableOffset, durableTableLength);
            durable = snapshot;
            pending = null;
            durableTableOffset = tableOffset;
            durableTableLength = tableLength;
            durableSlot = slot;
            durableSequence = sequence;
            rootRecord = root;
            long end = allocator.trimTail();
            try {
                if (file.size() > end) {
                    file.truncate(end);
                }
            } catch (IOException e) {
                // Harmless: the bytes past the allocation end are unreferenced, and open trims them.
            }
        } finally {
            lock.unlock();
        }
    }

    /** Releases the extent of an old version of {@code blockNumber} unless a checkpoint references it. */
    private void releaseIfUnpinned(long blockNumber, long offset, int length) {
        if (!isExtent(offset) || offset == durable.offset(blockNumber)
                || (pending != null && offset == pending.offset(blockNumber))) {
            return;
        }
        allocator.release(offset, length);
    }

    private static boolean isExtent(long offset) {
        return offset != TranslationTable.FREE && offset != TranslationTable.UNWRITTEN;
    }

    /** A read-only view of the root record of the last durable checkpoint, or {@code null} if none. */
    public ByteBuffer rootRecord() {
        lock.lock();
        try {
            return rootRecord == null ? null : rootRecord.duplicate();
        } finally {
            lock.unlock();
        }
    }

    /** Sequence number of the last durable checkpoint (1 for a new file). */
    public long checkpointSequence() {
        lock.lock();
        try {
            return durableSequence;
        } finally {
            lock.unlock();
        }
    }

    /** Bytes the file spans (its allocation end; the physical size differs by the padding of the last block). */
    public long fileSize() {
        lock.lock();
        try {
            return allocator.end();
        } finally {
            lock.unlock();
        }
    }

    /** Aligned bytes held by the current version of every block. */
    public long liveBytes() {
        lock.lock();
        try {
            return table.liveBytes();
        } finally {
            lock.unlock();
        }
    }

    /** Space accounting as of now. */
    public BlockFileStats stats() {
        lock.lock();
        try {
            long end = allocator.end();
            long live = table.liveBytes();
            long free = allocator.freeBytes();
            return new BlockFileStats(end, live, free, end - BlockFormat.DATA_START - live - free,
                    allocator.freeExtentCount(), table.allocatedCount(), durableSequence);
        } finally {
            lock.unlock();
        }
    }

    /**
     * Closes the file without a checkpoint: what was written since the last checkpoint is not part of
     * the file when it is opened again. Waits for a checkpoint in progress. Idempotent.
     */
    @Override
    public void close() throws IOException {
        checkpointLock.lock();
        try {
            if (closed) {
                return;
            }
            closed = true;
            file.close();
        } finally {
            checkpointLock.unlock();
        }
    }

    @Override
    public String toString() {
        return "BlockFile[" + path + "]";
    }

    private void checkOpen() {
        if (closed) {
            throw new IllegalStateException("block file " + path + " is closed");
        }
    }

    private void checkWritable() throws IOException {
        checkOpen();
        IOException f = failure;
        if (f != null) {
            throw new IOException("block file " + path + " refuses writes after an earlier failure left its state "
                    + "on disk unknown; reopen it to recover the last checkpoint", f);
        }
    }
}
