package io.betree.internal.log;

import io.betree.internal.fault.BetreeIOException;
import io.betree.internal.log.SegmentFiles.Segment;
import io.betree.internal.storage.FileHandle;
import io.betree.internal.storage.StorageEnv;
import java.io.Closeable;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The write-ahead log: typed, checksummed records appended to segment files in one directory, with
 * group commit. Format and recovery rules: {@code docs/log-format.md} and {@link LogReader}.
 *
 * <p><b>Life cycle.</b> {@link #open} validates the segment headers; {@link #replay} must then be
 * called exactly once, before anything else: it visits the records, truncates a torn tail and syncs
 * the last segment, so that every replayed record is durable. Appends then continue at
 * {@link #endLsn()}. {@link #close()} syncs and closes.
 *
 * <p><b>LSNs.</b> A record's LSN is its position in the log's byte stream (segment headers excluded),
 * so LSNs grow with every append and never repeat. {@link #append} returns the record's end LSN (the
 * LSN of the next record); pass it to {@link #syncTo} to wait until the record is durable.
 *
 * <p><b>Group commit.</b> Appends write to the operating system at once, under a short lock; syncs
 * run outside it. A thread calling {@link #syncTo} while another thread's sync runs waits for that
 * sync; if its record is still not durable afterwards, one waiter syncs everything appended by then
 * for all the others (leader and followers), so concurrent commits share syncs.
 *
 * <p><b>Failures.</b> After a failed write or sync the log refuses further appends with a
 * {@link BetreeIOException} whose cause is the first failure, and must be reopened: a failed fsync
 * cannot be retried safely, because the kernel may have dropped the dirty pages. After a failed write
 * (not sync), records appended before it can still be synced. Interrupting a thread while it syncs
 * may fail the sync, with the same consequence.
 *
 * <p>All methods are thread-safe.
 */
public final class WriteAheadLog implements Closeable {

    /** Largest payload a record can carry. */
    public static final int MAX_PAYLOAD_BYTES = 1 << 28;
    /** Smallest segment size {@link #open} accepts. */
    public static final long MIN_SEGMENT_BYTES = 128;

    private final StorageEnv env;
    private final Path dir;
    private final long segmentBytes;

    // Guarded by this.
    private final List<Segment> segments;
    /** Guards the fields below; a lock, not a monitor, since replay does I/O under it. */
    private final ReentrantLock state = new ReentrantLock();
    private boolean replayStarted;
    private boolean closed;
    private PeriodicTask periodic;

    /** Set once replay has succeeded. */
    private volatile LogTail tail;

    private WriteAheadLog(StorageEnv env, Path dir, long segmentBytes, List<Segment> segments) {
        this.env = env;
        this.dir = dir;
        this.segmentBytes = segmentBytes;
        this.segments = segments;
    }

    /**
     * Opens the log in {@code dir}, creating the directory and a first segment (at LSN 0) if there is
     * none. Validates every segment header and removes leftovers of interrupted segment creations.
     * Files whose names are not segment names are ignored. {@link #replay} must come next.
     *
     * @param segmentBytes the size at which appends move on to a new segment (a segment exceeds it
     *     only to hold a single larger record)
     * @throws io.betree.internal.fault.CorruptionException if a segment file's header is foreign or damaged
     * @throws io.betree.internal.fault.BetreeException if a segment was written by a newer format version
     * @throws IOException if the directory cannot be read or the first segment created
     */
    public static WriteAheadLog open(StorageEnv env, Path dir, long segmentBytes) throws IOException {
        Objects.requireNonNull(env, "env");
        Objects.requireNonNull(dir, "dir");
        if (segmentBytes < MIN_SEGMENT_BYTES) {
            throw new IllegalArgumentException("segment size " + segmentBytes + " is below " + MIN_SEGMENT_BYTES);
        }
        env.createDirectories(dir);
        List<Segment> segments = new ArrayList<>(SegmentFiles.list(env, dir, true));
        if (segments.isEmpty()) {
            segments.add(SegmentFiles.create(env, dir, 0));
        }
        return new WriteAheadLog(env, dir, segmentBytes, segments);
    }

    /**
     * Visits, in LSN order, every valid record with an LSN of at least {@code fromLsn}; segments that
     * end at or before it are skipped unread. Then discards a torn tail (truncating the last segment),
     * syncs the last segment and makes the log ready for appends after the last valid record.
     *
     * @throws io.betree.internal.fault.CorruptionException if records are damaged or missing anywhere but in a torn
     *     tail (see {@link LogReader}), naming the file and offset; the visitor may have seen the
     *     records before the damage, and the log stays unusable
     * @throws IllegalStateException if called a second time or after close
     * @throws IOException if reading, truncating or syncing fails, or as thrown by the visitor
     */
    public void replay(long fromLsn, RecordVisitor visitor) throws IOException {
        Objects.requireNonNull(visitor, "visitor");
        state.lock();
        try {
            replayLocked(fromLsn, visitor);
        } finally {
            state.unlock();
        }
    }

    private void replayLocked(long fromLsn, RecordVisitor visitor) throws IOException {
        checkOpen();
        if (replayStarted) {
            throw new IllegalStateException("write-ahead log " + dir + " can be replayed only once");
        }
        replayStarted = true;
        LogReader.Result result = LogReader.scan(env, segments, fromLsn, visitor);
        FileHandle file = env.open(result.lastSegment());
        try {
            if (result.discardedBytes() > 0) {
                file.truncate(result.lastSegmentBytes());
            }
            file.sync();
        } catch (IOException | RuntimeException e) {
            try {
                file.close();
            } catch (IOException suppressed) {
                e.addSuppressed(suppressed);
            }
            throw e;
        }
        tail = new LogTail(env, dir, segmentBytes, segments, file, result.lastSegmentBytes(), result.endLsn());
    }

    /**
     * The payload of the record of type {@code type} at {@code lsn}, read while {@link #replay} runs
     * (from its visitor): recovery reads the parts of a large commit where they were logged, which
     * may lie before the position it replays from.
     *
     * @throws io.betree.internal.fault.CorruptionException if no valid record of that type is there
     * @throws IllegalStateException outside a replay
     * @throws IOException if reading fails
     */
    public ByteBuffer recordDuringReplay(long lsn, LogRecordType type) throws IOException {
        state.lock();
        try {
            if (!replayStarted || tail != null) {
                throw new IllegalStateException("records are read by position only during replay");
            }
            return LogReader.recordAt(env, segments, lsn, type);
        } finally {
            state.unlock();
        }
    }

    /** Appends {@code payload} under its own type; see {@link #append(LogRecordType, ByteBuffer)}. */
    public long append(LogPayload payload) throws IOException {
        return append(payload.type(), payload.encode());
    }

    /**
     * Appends a record holding the remaining bytes of {@code payload} (its position is not moved).
     * When this returns the record has been written to the operating system, not necessarily to disk.
     * Rolls to a new segment first if the record would take the current one past the segment size.
     *
     * @return the record's end LSN: pass it to {@link #syncTo} to make the record durable
     * @throws IllegalArgumentException if the payload exceeds {@link #MAX_PAYLOAD_BYTES}
     * @throws IllegalStateException before {@link #replay} completed, or after close
     * @throws BetreeIOException if an earlier write or sync failed (the log must be reopened)
     * @throws IOException if the write fails (a full disk, say); the log then refuses further appends
     */
    public long append(LogRecordType type, ByteBuffer payload) throws IOException {
        Objects.requireNonNull(type, "type");
        if (payload.remaining() > MAX_PAYLOAD_BYTES) {
            throw new IllegalArgumentException("payload of " + payload.remaining() + " bytes exceeds "
                    + MAX_PAYLOAD_BYTES);
        }
        return tail().append(type, payload);
    }

    /**
     * Returns once every record ending at or before {@code lsn} is durable, syncing if needed; shares
     * syncs with concurrent callers (see the class comment).
     *
     * @throws IllegalArgumentException if {@code lsn} is beyond {@link #endLsn()}
     * @throws IllegalStateException before {@link #replay}, or after close unless already durable
     * @throws BetreeIOException if an earlier sync failed (the log must be reopened)
     * @throws IOException if this call's sync fails; the log then refuses further appends
     */
    public void syncTo(long lsn) throws IOException {
        tail().syncTo(lsn);
    }

    /**
     * Syncs whatever has been appended every {@code interval}, for commits that do not wait for
     * durability themselves, on the thread the process shares for this ({@link BackgroundScheduler}).
     * It stops at {@link #close()} or at the first failure (which later appends then report).
     *
     * @throws IllegalStateException before {@link #replay}, after close, or if already started
     */
    public void startPeriodicSync(Duration interval) {
        long nanos = interval.toNanos();
        if (nanos <= 0) {
            throw new IllegalArgumentException("interval must be positive: " + interval);
        }
        state.lock();
        try {
            schedulePeriodicSync(nanos);
        } finally {
            state.unlock();
        }
    }

    private void schedulePeriodicSync(long nanos) {
        LogTail t = tail();
        checkOpen();
        if (periodic != null) {
            throw new IllegalStateException("periodic sync already started");
        }
        // A failure thrown here ends this log's periodic sync only (PeriodicTask keeps it): the
        // log already refuses appends with it, and the shared thread goes on with other logs.
        periodic = BackgroundScheduler.scheduleLogSync("periodic sync of " + dir, nanos, () -> {
            long target = t.endLsn();
            if (target > t.durableLsn()) {
                try {
                    t.syncTo(target);
                } catch (IOException e) {
                    throw new BetreeIOException("periodic sync of " + dir + " failed", e);
                }
            }
        });
    }

    /**
     * The LSN after the last record appended or replayed: where the next record goes.
     *
     * @throws IllegalStateException before {@link #replay}
     */
    public long endLsn() {
        return tail().endLsn();
    }

    /**
     * The LSN up to which records are durable: every record ending at or before it survives a crash.
     *
     * @throws IllegalStateException before {@link #replay}
     */
    public long durableLsn() {
        return tail().durableLsn();
    }

    /**
     * The LSN the oldest remaining segment starts at: records before it were deleted.
     *
     * @throws IllegalStateException before {@link #replay}
     */
    public long firstLsn() {
        return tail().firstLsn();
    }

    /**
     * Deletes the oldest segments all of whose records end at or before {@code lsn}, never the segment
     * being appended to. The directory is synced after each deletion, so a crash cannot leave a gap.
     *
     * @throws IllegalStateException before {@link #replay} or after close
     * @throws IOException if a deletion fails; that segment and later ones are kept
     */
    public void deleteSegmentsBefore(long lsn) throws IOException {
        tail().deleteSegmentsBefore(lsn);
    }

    /**
     * Stops the periodic sync (waiting out one in progress), syncs what was appended (unless a sync
     * failed before) and closes the files. Idempotent.
     *
     * @throws IOException if the final sync or closing fails
     */
    @Override
    public void close() throws IOException {
        PeriodicTask syncer;
        state.lock();
        try {
            if (closed) {
                return;
            }
            closed = true;
            syncer = periodic;
            periodic = null;
        } finally {
            state.unlock();
        }
        if (syncer != null) {
            syncer.cancel(); // Outside the state lock: it may wait for a sync in progress.
        }
        LogTail t = tail;
        if (t != null) {
            t.close();
        }
    }

    @Override
    public String toString() {
        LogTail t = tail;
        return "WriteAheadLog[" + dir + (t == null ? ", not replayed" : ", end " + t.endLsn() + ", durable "
                + t.durableLsn()) + "]";
    }

    private LogTail tail() {
        LogTail t = tail;
        if (t == null) {
            throw new IllegalStateException("write-ahead log " + dir + " must be replayed first");
        }
        return t;
    }

    private void checkOpen() {
        if (closed) {
            throw new IllegalStateException("write-ahead log " + dir + " is closed");
        }
    }
}
