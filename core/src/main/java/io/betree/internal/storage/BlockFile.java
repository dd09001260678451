package io.betree.internal.storage;

import io.betree.internal.fault.CorruptionException;
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
 * <p>Fuzzy checkpoints: {@link #beginCheckpoint} captures the current table as the checkpoint's
 * table; writers go on meanwhile ({@link #write}, {@link #freeBlockNumber}, {@link #allocateBlockNumber}
 * change only the current table), and the engine hands the block images as of the begin to
 * {@link #writeForCheckpoint}, which places them in the checkpoint's table only. {@link #finishCheckpoint}
 * makes that table durable; {@link #abortCheckpoint} drops it. {@link #checkpoint} is a begin followed
 * at once by a finish. While a checkpoint is in progress three tables coexist (durable, in progress,
 * current) and an extent is reused only when none of them references it; a block number the
 * checkpoint's table holds is not handed out again before the checkpoint ends, even if it was freed.
 *
 * <p>Thread safety: every method may be called concurrently. The translation table and the free-space
 * map are guarded by one lock held only for bookkeeping; compression, checksums and file I/O run
 * outside it, so reads and writes of different blocks proceed in parallel. A read that races with a
 * rewrite of the same block returns either version. One checkpoint runs at a time; it captures the
 * table as of its begin, and writes that complete later are part of the next one.
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
    /**
     * The table of the checkpoint in progress (from {@link #beginCheckpoint} until it completes or is
     * dropped), or null; its extents are never overwritten and its numbers are never handed out again.
     * Stays set, frozen, after a failure that left the state on disk unknown.
     */
    private CheckpointTable inProgress;
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
     * @throws io.betree.internal.fault.BetreeException if the file was written by a newer format version
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
     * after the next checkpoint. The number itself may be handed out again at once, unless the table
     * of a checkpoint in progress holds it: then only after that checkpoint finished or was aborted.
     *
     * @throws IllegalArgumentException if the number is not allocated
     */
    public void freeBlockNumber(long blockNumber) {
        checkOpen();
        lock.lock();
        try {
            long offset = table.offset(blockNumber);
            int length = table.length(blockNumber);
            table.free(blockNumber, inProgress != null && inProgress.contains(blockNumber));
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
        checkPayload(payload, codec);
        checkWritable();
        if (!isAllocated(blockNumber)) {
            throw new IllegalArgumentException("block " + blockNumber + " is not allocated in " + path);
        }
        encodeAndStore(blockNumber, payload, codec, null);
    }

    /**
     * Stores the remaining bytes of {@code payload} (not modified) as the image of {@code blockNumber}
     * in the checkpoint in progress: the block as it was when {@link #beginCheckpoint} was called,
     * which the caller serialized before changing it. The image goes to free space and the
     * checkpoint's table points at it. If the current table still points where the checkpoint's table
     * did (the block was neither rewritten nor freed since the begin, so its current version is that
     * image), the current table moves to the image too and the old location becomes reusable; else
     * only the checkpoint's table changes. Calling it again for the same block replaces the image.
     *
     * @throws IllegalStateException if no checkpoint is in progress, it is being finished, or it ended
     *     (finished or aborted) while the image was written; the image is then discarded
     * @throws IllegalArgumentException if the checkpoint's table does not hold {@code blockNumber}, or
     *     the payload exceeds {@link #MAX_BLOCK_SIZE}
     * @throws IOException if the write fails; the checkpoint then keeps the previous image
     */
    public void writeForCheckpoint(long blockNumber, ByteBuffer payload, BlockCompressor codec)
            throws IOException {
        checkPayload(payload, codec);
        checkWritable();
        CheckpointTable checkpoint;
        lock.lock();
        try {
            checkpoint = activeCheckpoint();
            if (!checkpoint.contains(blockNumber)) {
                throw new IllegalArgumentException("block " + blockNumber
                        + " is not in the table of the checkpoint in progress in " + path);
            }
        } finally {
            lock.unlock();
        }
        encodeAndStore(blockNumber, payload, codec, checkpoint);
    }

    private static void checkPayload(ByteBuffer payload, BlockCompressor codec) {
        Objects.requireNonNull(payload, "payload");
        Objects.requireNonNull(codec, "codec");
        int length = payload.remaining();
        if (length > MAX_BLOCK_SIZE) {
            throw new IllegalArgumentException("block of " + length + " bytes exceeds the maximum of "
                    + MAX_BLOCK_SIZE);
        }
        int codecId = codec.id();
        if (codecId < 0 || codecId > 255) {
            throw new IllegalArgumentException("codec id " + codecId + " outside 0..255");
        }
    }

    /** Compresses and stores a block: as its current version, or as its image in {@code checkpoint}. */
    private void encodeAndStore(long blockNumber, ByteBuffer payload, BlockCompressor codec,
            CheckpointTable checkpoint) throws IOException {
        int length = payload.remaining();
        int bound = codec.id() == 0 || length == 0 ? length : Math.max(length, codec.maxCompressedLength(length));
        ByteBuffer block = ScratchBuffers.take(BlockHeader.SIZE + bound);
        try {
            int diskLength = BlockEncoding.encode(block, blockNumber, payload, codec, bound);
            store(blockNumber, block, diskLength, checkpoint);
        } finally {
            ScratchBuffers.giveBack(block);
        }
    }

    /**
     * Writes an encoded block to fresh space and makes it the block's current version, or, with a
     * {@code checkpoint}, its image in that checkpoint's table (see {@link #writeForCheckpoint}).
     */
    private void store(long blockNumber, ByteBuffer block, int diskLength, CheckpointTable checkpoint)
            throws IOException {
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
            if (checkpoint != null) {
                installImage(blockNumber, offset, diskLength, checkpoint);
                return;
            }
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

    /** Under the lock: points {@code checkpoint}'s entry (and the current one if unchanged) at a written image. */
    private void installImage(long blockNumber, long offset, int diskLength, CheckpointTable checkpoint) {
        if (inProgress != checkpoint || checkpoint.frozen()) {
            allocator.release(offset, diskLength);
            throw new IllegalStateException("the checkpoint ended or started finishing while block " + blockNumber
                    + " was written for it in " + path);
        }
        long previous = checkpoint.offset(blockNumber);
        int previousLength = checkpoint.length(blockNumber);
        checkpoint.set(blockNumber, offset, diskLength);
        if (table.offset(blockNumber) == previous) {
            // Neither rewritten nor freed since the begin (a freed number is held, so not reused):
            // the current version is this very image.
            table.set(blockNumber, offset, diskLength);
        }
        if (isExtent(previous) && previous != table.offset(blockNumber) && previous != durable.offset(blockNumber)) {
            allocator.release(previous, previousLength);
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
     * Equivalent to {@link #beginCheckpoint} followed at once by {@link #finishCheckpoint}.
     *
     * @param rootRecord the caller's catalog (remaining bytes, not consumed, copied), or {@code null}
     * @throws IllegalArgumentException if the root record exceeds {@link #MAX_ROOT_RECORD_SIZE}
     * @throws IllegalStateException if a checkpoint begun with {@link #beginCheckpoint} is in progress
     * @throws IOException if the checkpoint could not be made durable; the previous one stays in force
     */
    public void checkpoint(ByteBuffer rootRecord) throws IOException {
        ByteBuffer root = copyRootRecord(rootRecord);
        checkpointLock.lock();
        try {
            checkWritable();
            runCheckpoint(root, true);
        } finally {
            checkpointLock.unlock();
        }
    }

    /**
     * Begins a fuzzy checkpoint: takes a copy of the current translation table as the table of the
     * checkpoint in progress. Writers may go on; the caller then passes the images of the blocks that
     * changed since (as they were now) to {@link #writeForCheckpoint} and ends with
     * {@link #finishCheckpoint}, or {@link #abortCheckpoint} after a failure. Until then the space the
     * checkpoint's table references is not reused, and the numbers it holds are not handed out again.
     * Does no I/O.
     *
     * @throws IllegalStateException if a checkpoint is already in progress or the file is closed
     * @throws java.io.UncheckedIOException if an earlier failure left the state on disk unknown (the
     *     file refuses writes and checkpoints until reopened)
     */
    public void beginCheckpoint() {
        checkOpen();
        IOException f = failure;
        if (f != null) {
            throw new java.io.UncheckedIOException(refusal(f));
        }
        lock.lock();
        try {
            if (inProgress != null) {
                throw new IllegalStateException("a checkpoint is already in progress in " + path);
            }
            inProgress = new CheckpointTable(table.snapshot());
        } finally {
            lock.unlock();
        }
    }

    /**
     * Finishes the checkpoint in progress exactly like {@link #checkpoint} writes one: its table (as
     * the begin captured it, with the images of {@link #writeForCheckpoint}) and {@code rootRecord}
     * go to free space, then sync, header, sync. Afterwards it is the durable checkpoint, the space
     * only the previous one referenced is reusable, and the numbers it held are free again.
     *
     * <p>On failure the checkpoint is over, as if aborted, and the previous one stays in force; if the
     * failure left the state on disk unknown (a failed sync or header write), the file refuses further
     * writes and must be reopened. Either way {@link #abortCheckpoint} is then a harmless no-op.
     *
     * @param rootRecord the caller's catalog (remaining bytes, not consumed, copied), or {@code null}
     * @throws IllegalStateException if no checkpoint is in progress or another thread is finishing it
     * @throws IllegalArgumentException if the root record exceeds {@link #MAX_ROOT_RECORD_SIZE}; the
     *     checkpoint is then still in progress
     * @throws IOException if the checkpoint could not be made durable
     */
    public void finishCheckpoint(ByteBuffer rootRecord) throws IOException {
        ByteBuffer root = copyRootRecord(rootRecord);
        checkpointLock.lock();
        try {
            checkWritable();
            runCheckpoint(root, false);
        } finally {
            checkpointLock.unlock();
        }
    }

    /**
     * Drops the checkpoint in progress, for instance after a failure while its images were written:
     * the space only its table referenced becomes reusable and the numbers it held are free again.
     * Does nothing if no checkpoint is in progress (a failed {@link #finishCheckpoint} already ended
     * it) or the file refuses writes after a failure (its state on disk is unknown; reopen it).
     *
     * @throws IllegalStateException if another thread is finishing the checkpoint
     */
    public void abortCheckpoint() {
        lock.lock();
        try {
            CheckpointTable checkpoint = inProgress;
            if (checkpoint == null || failure != null) {
                return;
            }
            if (checkpoint.frozen()) {
                throw new IllegalStateException("the checkpoint in progress in " + path + " is being finished");
            }
            dropCheckpoint(checkpoint.table());
        } finally {
            lock.unlock();
        }
    }

    /** Whether a checkpoint is in progress (begun and neither finished nor aborted). */
    public boolean checkpointInProgress() {
        lock.lock();
        try {
            return inProgress != null && failure == null;
        } finally {
            lock.unlock();
        }
    }

    /**
     * File offset of {@code blockNumber} in the table of the checkpoint in progress, for diagnostics
     * and tests: -1 if no checkpoint is in progress or its table does not hold the number, 0 if the
     * block had not been written at the begin and no image was written since.
     */
    long checkpointBlockOffset(long blockNumber) {
        lock.lock();
        try {
            return inProgress == null ? TranslationTable.FREE : inProgress.offset(blockNumber);
        } finally {
            lock.unlock();
        }
    }

    /** Under the lock: the checkpoint in progress that images may still be written for. */
    private CheckpointTable activeCheckpoint() {
        if (inProgress == null) {
            throw new IllegalStateException("no checkpoint in progress in " + path);
        }
        if (inProgress.frozen()) {
            throw new IllegalStateException("the checkpoint in progress in " + path + " is being finished");
        }
        return inProgress;
    }

    private static ByteBuffer copyRootRecord(ByteBuffer rootRecord) {
        if (rootRecord == null) {
            return null;
        }
        if (rootRecord.remaining() > MAX_ROOT_RECORD_SIZE) {
            throw new IllegalArgumentException("root record of " + rootRecord.remaining()
                    + " bytes exceeds the maximum of " + MAX_ROOT_RECORD_SIZE);
        }
        return ByteBuffer.allocate(rootRecord.remaining()).put(rootRecord.duplicate()).flip().asReadOnlyBuffer();
    }

    /**
     * Writes the table of a checkpoint and makes it durable. With {@code fresh} the checkpoint is begun
     * here (in the same critical section, so nothing happens in between); else the one in progress is
     * finished.
     */
    private void runCheckpoint(ByteBuffer root, boolean fresh) throws IOException {
        TableSnapshot snapshot;
        long tableOffset;
        long tableLength;
        long sequence;
        int slot;
        long allocatedEnd;
        lock.lock();
        try {
            CheckpointTable checkpoint;
            if (fresh) {
                if (inProgress != null) {
                    throw new IllegalStateException("a checkpoint is already in progress in " + path);
                }
                checkpoint = new CheckpointTable(table.snapshot());
                inProgress = checkpoint;
            } else {
                checkpoint = activeCheckpoint();
            }
            checkpoint.freeze();
            snapshot = checkpoint.table();
            tableLength = snapshot.encodedLength(root == null ? -1 : root.remaining());
            tableOffset = allocator.allocate(tableLength);
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
            allocator.release(tableOffset, tableLength);
            dropCheckpoint(snapshot);
        } finally {
            lock.unlock();
        }
    }

    /**
     * Under the lock: ends the checkpoint in progress without making it durable. Releases the versions
     * only its table referenced (begin-time versions rewritten or freed since, and images whose block
     * moved on) and the numbers it held.
     */
    private void dropCheckpoint(TableSnapshot snapshot) {
        inProgress = null;
        for (int b = 0; b < snapshot.size(); b++) {
            long offset = snapshot.offsets()[b];
            if (isExtent(offset) && offset != table.offset(b) && offset != durable.offset(b)) {
                allocator.release(offset, snapshot.lengths()[b]);
            }
        }
        table.releaseHeldNumbers();
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
            inProgress = null;
            table.releaseHeldNumbers();
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

    /**
     * Releases the extent of an old version of {@code blockNumber} that the current table just dropped,
     * unless the durable checkpoint or the one in progress references it.
     */
    private void releaseIfUnpinned(long blockNumber, long offset, int length) {
        if (!isExtent(offset) || offset == durable.offset(blockNumber)
                || (inProgress != null && offset == inProgress.offset(blockNumber))) {
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
     * the file when it is opened again. Waits for a checkpoint that is being finished; a begun one that
     * is not being finished is dropped. Idempotent.
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
            throw refusal(f);
        }
    }

    private IOException refusal(IOException failure) {
        return new IOException("block file " + path + " refuses writes after an earlier failure left its state "
                + "on disk unknown; reopen it to recover the last checkpoint", failure);
    }
}
