package io.betree.internal.storage;

import io.betree.internal.fault.CorruptionException;
import io.betree.compression.BlockCompressor;
import java.io.Closeable;
import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
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
 * <p>Thread safety: every method may be called concurrently. The translation tables and the free-space
 * map live in a {@link TableSet}, guarded by its one lock, which is held only for bookkeeping;
 * compression, checksums and file I/O run outside it, so reads and writes of different blocks proceed
 * in parallel. A read that races with a rewrite of the same block returns either version. One
 * checkpoint runs at a time; it captures the table as of its begin, and writes that complete later are
 * part of the next one.
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

    /** Bytes in front of every stored block's payload: what a {@link #readPrefix} of n bytes reads beyond n. */
    public static final int BLOCK_HEADER_BYTES = BlockHeader.SIZE;

    /** Reads retried when a block moved while being read (a concurrent rewrite), before giving up. */
    private static final int READ_RETRIES = 8;

    /** Bytes of blocks written after which a background sync of the file starts (see {@link BackgroundSyncs}). */
    static final long SYNC_AHEAD_BYTES = 8L << 20;

    private final Path path;
    private final FileHandle file;
    /** Bytes written since the last background sync started. */
    private final AtomicLong writtenSinceSync = new AtomicLong();
    /** Whether a background sync of this file is queued or running. */
    private final AtomicBoolean syncing = new AtomicBoolean();

    /** Serializes checkpoints with each other and with close; taken before the lock of {@link #tables}. */
    private final ReentrantLock checkpointLock = new ReentrantLock();
    /** The translation tables and the free space, and the lock that guards them (see {@link TableSet}). */
    private final TableSet tables;
    private volatile boolean closed;

    private BlockFile(Path path, FileHandle file, FileHeader header, int slot, TableSnapshot.Loaded loaded,
            ExtentAllocator allocator) {
        this.path = path;
        this.file = file;
        this.tables = new TableSet(path, file, header, slot, loaded, allocator);
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
        return tables.allocateNumber();
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
        tables.freeNumber(blockNumber);
    }

    /** Whether {@code blockNumber} is allocated. */
    public boolean isAllocated(long blockNumber) {
        return tables.isAllocated(blockNumber);
    }

    /**
     * File offset of the current version of {@code blockNumber}, for diagnostics and for tests that
     * damage specific blocks; -1 if the number is not allocated, 0 if it was never written.
     */
    public long blockOffset(long blockNumber) {
        return tables.offset(blockNumber);
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
     * @return whether the image became the block's current version too; when it did not, the
     *     current version is one written since the begin, which may be older than this image (a
     *     write of an earlier state that ended after the begin), so a caller holding newer contents
     *     must write them again
     * @throws IllegalStateException if no checkpoint is in progress, it is being finished, or it ended
     *     (finished or aborted) while the image was written; the image is then discarded
     * @throws IllegalArgumentException if the checkpoint's table does not hold {@code blockNumber}, or
     *     the payload exceeds {@link #MAX_BLOCK_SIZE}
     * @throws IOException if the write fails; the checkpoint then keeps the previous image
     */
    public boolean writeForCheckpoint(long blockNumber, ByteBuffer payload, BlockCompressor codec)
            throws IOException {
        checkPayload(payload, codec);
        checkWritable();
        CheckpointTable checkpoint = tables.imageTarget(blockNumber);
        return encodeAndStore(blockNumber, payload, codec, checkpoint);
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

    /**
     * Compresses and stores a block: as its current version, or as its image in {@code checkpoint};
     * returns whether it became the current version.
     */
    private boolean encodeAndStore(long blockNumber, ByteBuffer payload, BlockCompressor codec,
            CheckpointTable checkpoint) throws IOException {
        int length = payload.remaining();
        int bound = codec.id() == 0 || length == 0 ? length : Math.max(length, codec.maxCompressedLength(length));
        ByteBuffer block = ScratchBuffers.take(BlockHeader.SIZE + bound);
        try {
            int diskLength = BlockEncoding.encode(block, blockNumber, payload, codec, bound);
            return store(blockNumber, block, diskLength, checkpoint);
        } finally {
            ScratchBuffers.giveBack(block);
        }
    }

    /**
     * Writes an encoded block to fresh space and makes it the block's current version, or, with a
     * {@code checkpoint}, its image in that checkpoint's table (see {@link #writeForCheckpoint});
     * returns whether it became the current version.
     */
    private boolean store(long blockNumber, ByteBuffer block, int diskLength, CheckpointTable checkpoint)
            throws IOException {
        long offset = tables.allocate(diskLength);
        try {
            file.write(block, offset);
        } catch (IOException | RuntimeException e) {
            tables.release(offset, diskLength);
            throw e;
        }
        boolean current = true;
        if (checkpoint != null) {
            current = tables.installImage(blockNumber, offset, diskLength, checkpoint);
        } else {
            tables.installVersion(blockNumber, offset, diskLength);
        }
        syncAheadIfDue(diskLength);
        return current;
    }

    /** Starts a background sync once {@link #SYNC_AHEAD_BYTES} have been written since the last. */
    private void syncAheadIfDue(int written) {
        if (writtenSinceSync.addAndGet(written) >= SYNC_AHEAD_BYTES && syncing.compareAndSet(false, true)) {
            writtenSinceSync.set(0);
            BackgroundSyncs.submit(this::syncAhead);
        }
    }

    /**
     * A background sync. Nobody waits for it, but a failed one leaves the state on disk unknown
     * (blocks written since the last checkpoint may be lost), so the file then refuses writes.
     */
    private void syncAhead() {
        try {
            if (!closed && tables.failure() == null) {
                file.sync();
            }
        } catch (IOException e) {
            if (!closed) { // a close racing with the sync is no failure
                tables.failed(e);
            }
        } finally {
            syncing.set(false);
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
        return readPrefix(blockNumber, Integer.MAX_VALUE, allocator);
    }

    /**
     * Reads the first {@code prefixBytes} of the payload of {@code blockNumber} when the block is
     * stored uncompressed and longer than that: one read of its header and those bytes, the
     * header's fields verified but not the block's CRC, which covers the whole payload (the caller
     * checks what it takes with a checksum of its own). A block stored compressed, or no longer,
     * is read, verified and decompressed whole, as {@link #read} does. The allocator is called
     * with the length of what is returned.
     *
     * @return the allocator's buffer, flipped: exactly {@code prefixBytes} bytes of a longer
     *     payload, or the whole payload
     * @throws IllegalArgumentException if the number is not allocated or was never written, or
     *     {@code prefixBytes} is not positive
     * @throws CorruptionException if the header, or a block read whole, is damaged
     * @throws IOException if reading fails
     */
    public ByteBuffer readPrefix(long blockNumber, int prefixBytes, IntFunction<ByteBuffer> allocator)
            throws IOException {
        Objects.requireNonNull(allocator, "allocator");
        if (prefixBytes <= 0) {
            throw new IllegalArgumentException("prefix of " + prefixBytes + " bytes");
        }
        checkOpen();
        for (int attempt = 0; ; attempt++) {
            TableSet.Location location = tables.location(blockNumber);
            long offset = location.offset();
            int diskLength = location.length();
            if (offset == TranslationTable.FREE) {
                throw new IllegalArgumentException("block " + blockNumber + " is not allocated in " + path);
            }
            if (offset == TranslationTable.UNWRITTEN) {
                throw new IllegalArgumentException("block " + blockNumber + " has not been written in " + path);
            }
            int first = (int) Math.min(diskLength, (long) BlockHeader.SIZE + prefixBytes);
            ByteBuffer raw = ScratchBuffers.take(diskLength).limit(first);
            try {
                String problem = null;
                Throwable cause = null;
                BlockHeader.Fields fields = null;
                try {
                    file.readFully(raw, offset);
                    fields = BlockHeader.verifyFields(raw, diskLength, blockNumber);
                    if (fields.codecId() == 0 && first < diskLength) {
                        ByteBuffer out = allocator.apply(prefixBytes);
                        out.put(raw.duplicate().limit(first).position(BlockHeader.SIZE));
                        return out.flip();
                    }
                    if (first < diskLength) {
                        file.readFully(raw.limit(diskLength).position(first), offset + first);
                    }
                    BlockHeader.verifyCrc(raw, fields);
                } catch (EOFException e) {
                    problem = "the file ends inside the block";
                    cause = e;
                } catch (InvalidDataException e) {
                    problem = e.getMessage();
                }
                if (problem != null) {
                    if (attempt < READ_RETRIES && tables.releasedSince(location.releases())) {
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

    /**
     * Reads {@code length} bytes from {@code from} of the stored payload of {@code blockNumber}, as
     * they are on disk, with one read and no check at all: for a caller that checks what it reads
     * with a checksum of its own, inside a block stored uncompressed (a basement's chunk). A block
     * rewritten meanwhile may leave other data there; the caller's check tells, and it reads the
     * block whole instead. The allocator is called with {@code length}.
     *
     * @return the allocator's buffer, flipped; or null, having read nothing usable, when the
     *     number is not allocated or not written, the range does not lie inside the block's stored
     *     payload, or the file ends inside it (a block freed since, its space truncated away): the
     *     caller's hint was out of date
     * @throws IllegalArgumentException if the range is negative
     * @throws IOException if reading fails
     */
    public ByteBuffer readRange(long blockNumber, int from, int length, IntFunction<ByteBuffer> allocator)
            throws IOException {
        Objects.requireNonNull(allocator, "allocator");
        if (from < 0 || length <= 0) {
            throw new IllegalArgumentException("range of " + length + " bytes at " + from);
        }
        checkOpen();
        TableSet.Location location = tables.location(blockNumber);
        long offset = location.offset();
        if (offset == TranslationTable.FREE || offset == TranslationTable.UNWRITTEN
                || (long) from + length > location.length() - BlockHeader.SIZE) {
            return null;
        }
        ByteBuffer out = allocator.apply(length);
        try {
            file.readFully(out.duplicate().limit(out.position() + length), offset + BlockHeader.SIZE + from);
        } catch (EOFException e) {
            return null;
        }
        return out.limit(out.position() + length);
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
            tables.runCheckpoint(root, true);
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
        IOException f = tables.failure();
        if (f != null) {
            throw new java.io.UncheckedIOException(refusal(f));
        }
        tables.begin();
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
            tables.runCheckpoint(root, false);
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
        tables.abort();
    }

    /** Whether a checkpoint is in progress (begun and neither finished nor aborted). */
    public boolean checkpointInProgress() {
        return tables.checkpointInProgress();
    }

    /**
     * File offset of {@code blockNumber} in the table of the checkpoint in progress, for diagnostics
     * and tests: -1 if no checkpoint is in progress or its table does not hold the number, 0 if the
     * block had not been written at the begin and no image was written since.
     */
    long checkpointBlockOffset(long blockNumber) {
        return tables.checkpointOffset(blockNumber);
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

    /** A read-only view of the root record of the last durable checkpoint, or {@code null} if none. */
    public ByteBuffer rootRecord() {
        return tables.rootRecord();
    }

    /** Sequence number of the last durable checkpoint (1 for a new file). */
    public long checkpointSequence() {
        return tables.durableSequence();
    }

    /** Bytes the file spans (its allocation end; the physical size differs by the padding of the last block). */
    public long fileSize() {
        return tables.end();
    }

    /** Aligned bytes held by the current version of every block. */
    public long liveBytes() {
        return tables.liveBytes();
    }

    /** Space accounting as of now. */
    public BlockFileStats stats() {
        return tables.stats();
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
        IOException f = tables.failure();
        if (f != null) {
            throw refusal(f);
        }
    }

    private IOException refusal(IOException failure) {
        return new IOException("block file " + path + " refuses writes after an earlier failure left its state "
                + "on disk unknown; reopen it to recover the last checkpoint", failure);
    }
}
