package io.betree.internal.storage;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The translation tables of a {@link BlockFile} and the free space they share, with the checkpoint
 * lifecycle that moves a table from one role to the next: the current table (what reads see), the
 * table of the checkpoint in progress ({@link #begin} copies the current one, {@link #installImage}
 * points it at the images written for it) and the durable table (what the last checkpoint made
 * durable, which {@link #runCheckpoint} replaces). An extent is released to the allocator only when
 * none of the three references it; that copy-on-write rule lives here, in {@link #releaseIfUnpinned},
 * {@link #installImage}, {@link #dropCheckpoint} and {@link #completeCheckpoint}.
 *
 * <p>Lock discipline: one lock guards every mutable field (the tables, the allocator and the durable
 * checkpoint's header data). Every method but the private helpers marked "under the lock" takes it
 * itself, for bookkeeping only, and no caller holds it, so each such method is one atomic step;
 * compression, checksums and block I/O run in {@link BlockFile} between such steps.
 * {@link #runCheckpoint} writes the table and header with the lock released, between a step that
 * captures the checkpoint and one that installs or abandons it; installing releases the previous
 * checkpoint's extents in batches, a step each. The one I/O done under the lock is
 * the truncation of a free tail in {@link #completeCheckpoint}: released, a writer could append past
 * the new end and lose its block to the truncation. Callers serialize {@link #runCheckpoint}
 * themselves ({@link BlockFile}'s checkpoint lock, always taken before this one).
 */
final class TableSet {

    private static final int TABLE_SCRATCH_SIZE = 1 << 20;
    /** Extents a completed checkpoint releases per hold of the lock (see {@link #completeCheckpoint}). */
    private static final int RELEASES_PER_HOLD = 256;

    /**
     * Where the current version of a block lives, and the allocator's release count when that was
     * looked up: while the count is unchanged, the space cannot have been reused.
     */
    record Location(long offset, int length, long releases) {
    }

    private final Path path;
    private final FileHandle file;

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
     * The table of the checkpoint in progress (from {@link #begin} until it completes or is dropped),
     * or null; its extents are never overwritten and its numbers are never handed out again. Stays
     * set, frozen, after a failure that left the state on disk unknown.
     */
    private CheckpointTable inProgress;
    /** Read-only root record of the last durable checkpoint, or null. */
    private ByteBuffer rootRecord;

    /**
     * Set (under the lock) when the state on disk became unknown; writes and checkpoints then fail
     * with it. Volatile so that {@link BlockFile} can refuse a write without taking the lock.
     */
    private volatile IOException failure;

    /** The tables of {@code file}, as loaded from the checkpoint of {@code header} found in {@code slot}. */
    TableSet(Path path, FileHandle file, FileHeader header, int slot, TableSnapshot.Loaded loaded,
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
     * Records a failure that left the state on disk unknown (a failed sync: the kernel may have
     * dropped written pages); the file refuses writes and checkpoints from now on. The first one
     * recorded stays.
     */
    void failed(IOException e) {
        lock.lock();
        try {
            if (failure == null) {
                failure = e;
            }
        } finally {
            lock.unlock();
        }
    }

    /** The failure that left the state on disk unknown, or null. */
    IOException failure() {
        return failure;
    }

    /** Allocates the lowest free block number. */
    long allocateNumber() {
        lock.lock();
        try {
            return table.allocate();
        } finally {
            lock.unlock();
        }
    }

    /**
     * Frees {@code blockNumber} in the current table, holding the number while the checkpoint in
     * progress holds it, and releases its version unless a checkpoint references it.
     */
    void freeNumber(long blockNumber) {
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

    /** Whether {@code blockNumber} is allocated in the current table. */
    boolean isAllocated(long blockNumber) {
        lock.lock();
        try {
            return table.isAllocated(blockNumber);
        } finally {
            lock.unlock();
        }
    }

    /** Offset of {@code blockNumber} in the current table (see {@link TranslationTable#offset}). */
    long offset(long blockNumber) {
        lock.lock();
        try {
            return table.offset(blockNumber);
        } finally {
            lock.unlock();
        }
    }

    /** Offset of {@code blockNumber} in the checkpoint in progress, {@link TranslationTable#FREE} if none. */
    long checkpointOffset(long blockNumber) {
        lock.lock();
        try {
            return inProgress == null ? TranslationTable.FREE : inProgress.offset(blockNumber);
        } finally {
            lock.unlock();
        }
    }

    /** The current version of {@code blockNumber} and the release count to check a read against. */
    Location location(long blockNumber) {
        lock.lock();
        try {
            return new Location(table.offset(blockNumber), table.length(blockNumber), allocator.releaseCount());
        } finally {
            lock.unlock();
        }
    }

    /** Whether any extent was released since the release count was {@code releases}. */
    boolean releasedSince(long releases) {
        lock.lock();
        try {
            return allocator.releaseCount() != releases;
        } finally {
            lock.unlock();
        }
    }

    /** Allocates free space for a block of {@code length} bytes about to be written. */
    long allocate(int length) {
        lock.lock();
        try {
            return allocator.allocate(length);
        } finally {
            lock.unlock();
        }
    }

    /** Releases space {@link #allocate} returned whose write failed, so that nothing references it. */
    void release(long offset, int length) {
        lock.lock();
        try {
            allocator.release(offset, length);
        } finally {
            lock.unlock();
        }
    }

    /**
     * Points the current table at a version of {@code blockNumber} just written at {@code offset} and
     * releases the previous version unless a checkpoint references it.
     *
     * @throws IllegalStateException if the block was freed while being written; the new space is
     *     then released
     */
    void installVersion(long blockNumber, long offset, int length) {
        lock.lock();
        try {
            if (!table.isAllocated(blockNumber)) {
                allocator.release(offset, length);
                throw new IllegalStateException("block " + blockNumber + " was freed while being written");
            }
            long previous = table.offset(blockNumber);
            int previousLength = table.length(blockNumber);
            table.set(blockNumber, offset, length);
            releaseIfUnpinned(blockNumber, previous, previousLength);
        } finally {
            lock.unlock();
        }
    }

    /**
     * The checkpoint in progress, for an image of {@code blockNumber} about to be written for it.
     *
     * @throws IllegalStateException if none is in progress or it is being finished
     * @throws IllegalArgumentException if its table does not hold {@code blockNumber}
     */
    CheckpointTable imageTarget(long blockNumber) {
        lock.lock();
        try {
            CheckpointTable checkpoint = activeCheckpoint();
            if (!checkpoint.contains(blockNumber)) {
                throw new IllegalArgumentException("block " + blockNumber
                        + " is not in the table of the checkpoint in progress in " + path);
            }
            return checkpoint;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Points {@code checkpoint}'s entry (and the current one if unchanged) at an image just written
     * at {@code offset}, and releases the previous image unless another table references it.
     *
     * @return whether the image became the current version too
     * @throws IllegalStateException if {@code checkpoint} ended or started finishing meanwhile; the
     *     image's space is then released
     */
    boolean installImage(long blockNumber, long offset, int length, CheckpointTable checkpoint) {
        lock.lock();
        try {
            if (inProgress != checkpoint || checkpoint.frozen()) {
                allocator.release(offset, length);
                throw new IllegalStateException("the checkpoint ended or started finishing while block "
                        + blockNumber + " was written for it in " + path);
            }
            long previous = checkpoint.offset(blockNumber);
            int previousLength = checkpoint.length(blockNumber);
            checkpoint.set(blockNumber, offset, length);
            boolean current = table.offset(blockNumber) == previous;
            if (current) {
                // Neither rewritten nor freed since the begin (a freed number is held, so not reused):
                // the current version is this very image.
                table.set(blockNumber, offset, length);
            }
            if (isExtent(previous) && previous != table.offset(blockNumber)
                    && previous != durable.offset(blockNumber)) {
                allocator.release(previous, previousLength);
            }
            return current;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Begins a checkpoint: a copy of the current table becomes the table of the checkpoint in progress.
     *
     * @throws IllegalStateException if a checkpoint is already in progress
     */
    void begin() {
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
     * Drops the checkpoint in progress, unless there is none or a failure left the state on disk
     * unknown (then its table stays pinned, since its header may have reached the disk).
     *
     * @throws IllegalStateException if the checkpoint is being finished
     */
    void abort() {
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

    /** Whether a checkpoint is in progress and no failure left the state on disk unknown. */
    boolean checkpointInProgress() {
        lock.lock();
        try {
            return inProgress != null && failure == null;
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

    /**
     * Writes the table of a checkpoint and makes it durable: table region to free space, sync, the
     * header slot not holding the last checkpoint, sync. With {@code fresh} the checkpoint is begun
     * here (in the same critical section, so nothing happens in between); else the one in progress is
     * finished. On failure the checkpoint is abandoned ({@link #abandonCheckpoint}).
     *
     * @param root the read-only root record to store, already checked and copied, or {@code null}
     */
    void runCheckpoint(ByteBuffer root, boolean fresh) throws IOException {
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

    /**
     * Installs a durable checkpoint: releases what only its predecessor referenced, then trims the
     * tail. The extents to release are found in one step and released in others, a batch per hold
     * of the lock: released one by one in a single hold, the tens of thousands of a large file's
     * checkpoint held every block read and write up to 40 ms. Nothing can reference them meanwhile
     * (they are not free, so not handed out again), so they are merely unavailable for a moment.
     */
    private void completeCheckpoint(TableSnapshot snapshot, long tableOffset, long tableLength, long sequence,
            int slot, ByteBuffer root) {
        FreedExtents freed = new FreedExtents();
        lock.lock();
        try {
            TableSnapshot previous = durable;
            for (int b = 0; b < previous.size(); b++) {
                long offset = previous.offsets()[b];
                if (isExtent(offset) && offset != snapshot.offset(b) && offset != table.offset(b)) {
                    freed.add(offset, previous.lengths()[b]);
                }
            }
            freed.add(durableTableOffset, durableTableLength);
            durable = snapshot;
            inProgress = null;
            table.releaseHeldNumbers();
            durableTableOffset = tableOffset;
            durableTableLength = tableLength;
            durableSlot = slot;
            durableSequence = sequence;
            rootRecord = root;
        } finally {
            lock.unlock();
        }
        freed.coalesce();
        for (int from = 0; from < freed.size(); from += RELEASES_PER_HOLD) {
            lock.lock();
            try {
                freed.releaseTo(allocator, from, Math.min(freed.size(), from + RELEASES_PER_HOLD));
            } finally {
                lock.unlock();
            }
        }
        lock.lock();
        try {
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
     * Under the lock: releases the extent of an old version of {@code blockNumber} that the current
     * table just dropped, unless the durable checkpoint or the one in progress references it.
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
    ByteBuffer rootRecord() {
        lock.lock();
        try {
            return rootRecord == null ? null : rootRecord.duplicate();
        } finally {
            lock.unlock();
        }
    }

    /** Sequence number of the last durable checkpoint. */
    long durableSequence() {
        lock.lock();
        try {
            return durableSequence;
        } finally {
            lock.unlock();
        }
    }

    /** The allocation end: every extent in use lies below it. */
    long end() {
        lock.lock();
        try {
            return allocator.end();
        } finally {
            lock.unlock();
        }
    }

    /** Aligned bytes held by the current version of every block. */
    long liveBytes() {
        lock.lock();
        try {
            return table.liveBytes();
        } finally {
            lock.unlock();
        }
    }

    /** Space accounting as of now, taken in one step so that its figures agree. */
    BlockFileStats stats() {
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
}
