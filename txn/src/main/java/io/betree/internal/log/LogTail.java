package io.betree.internal.log;

import io.betree.internal.fault.BetreeIOException;
import io.betree.internal.log.SegmentFiles.Segment;
import io.betree.internal.storage.BackgroundSyncs;
import io.betree.internal.storage.FileHandle;
import io.betree.internal.storage.StorageEnv;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The appendable end of a {@link WriteAheadLog} once it has been replayed: writes records to the last
 * segment, rolls to new segments, makes records durable with group commit, deletes old segments, and
 * remembers the first failure.
 *
 * <p>One lock guards the state. Record writes happen under it (they only reach the operating system,
 * so they are short); syncs run outside it, with {@code syncing} telling others one is under way.
 * A roll waits until no sync runs, so that no sync can be using the handle it closes.
 *
 * <p>Every {@link #BACKGROUND_SYNC_BYTES} appended, a sync is started on a background thread
 * ({@link BackgroundSyncs}) whatever the durability mode, so the operating system never holds much
 * of the log unwritten: otherwise the sync that seals a segment at a roll, which runs inside the
 * commit order, wrote a whole segment and stalled every commit for 80-100 ms.
 */
final class LogTail {

    /** Appended bytes after which a background sync starts. */
    static final long BACKGROUND_SYNC_BYTES = 4L << 20;

    /** Record buffers up to this size are reused between appends. */
    private static final int SCRATCH_KEEP_BYTES = 1 << 20;

    private final StorageEnv env;
    private final Path dir;
    private final long segmentBytes;
    private final ReentrantLock lock = new ReentrantLock();
    /** Signalled whenever a sync ends or the durable LSN moves. */
    private final Condition syncDone = lock.newCondition();
    /** Serializes {@link #deleteSegmentsBefore} calls; a lock, not a monitor, since they do I/O. */
    private final ReentrantLock deletion = new ReentrantLock();

    // Guarded by lock.
    /** All segments, oldest first; the last one is appended to. */
    private final List<Segment> segments;
    /** Handle of the last segment; null after close. */
    private FileHandle current;
    /** Bytes of the last segment in use: its header and its records. */
    private long currentBytes;
    private boolean closed;
    /** Whether a sync of {@link #current} runs outside the lock. */
    private boolean syncing;
    /** The first write or sync failure; appends are refused once set. */
    private IOException failure;
    /** Whether a sync failed; then no sync is attempted any more. */
    private boolean syncFailed;
    private ByteBuffer scratch = ByteBuffer.allocate(4096);
    /** End LSN when the last background sync was asked for. */
    private long backgroundSyncLsn;

    // Written under lock, read anywhere.
    private volatile long endLsn;
    private volatile long durableLsn;

    /**
     * A tail appending to {@code file}, the last of {@code segments}, whose first {@code usedBytes}
     * bytes hold the header and records up to {@code endLsn}, all durable.
     */
    LogTail(StorageEnv env, Path dir, long segmentBytes, List<Segment> segments, FileHandle file, long usedBytes,
            long endLsn) {
        this.env = env;
        this.dir = dir;
        this.segmentBytes = segmentBytes;
        this.segments = new ArrayList<>(segments);
        this.current = file;
        this.currentBytes = usedBytes;
        this.endLsn = endLsn;
        this.durableLsn = endLsn;
    }

    long endLsn() {
        return endLsn;
    }

    long durableLsn() {
        return durableLsn;
    }

    long firstLsn() {
        lock.lock();
        try {
            return segments.get(0).startLsn();
        } finally {
            lock.unlock();
        }
    }

    /** See {@link WriteAheadLog#append(LogRecordType, ByteBuffer)}. */
    long append(LogRecordType type, ByteBuffer payload) throws IOException {
        int size = RecordFormat.size(payload.remaining());
        lock.lock();
        try {
            checkAppendable();
            while (currentBytes > SegmentHeader.SIZE && currentBytes + size > segmentBytes) {
                if (syncing) {
                    syncDone.awaitUninterruptibly();
                    checkAppendable();
                } else {
                    roll();
                }
            }
            long lsn = endLsn;
            ByteBuffer record = recordBuffer(size);
            RecordFormat.encode(record, lsn, durableLsn, type, payload);
            record.flip();
            try {
                current.write(record, currentBytes);
            } catch (IOException e) {
                failed(e, false);
                throw new IOException("cannot append to log segment " + current.path() + ": " + e.getMessage(), e);
            }
            currentBytes += size;
            endLsn = lsn + size;
            if (endLsn - Math.max(backgroundSyncLsn, durableLsn) >= BACKGROUND_SYNC_BYTES && !syncing) {
                backgroundSyncLsn = endLsn;
                long target = endLsn;
                BackgroundSyncs.submit(() -> syncAhead(target));
            }
            return endLsn;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Seals the current segment (synced, so that no crash can lose a segment before the last one)
     * and continues in a new, durably created one. Lock held, no sync running.
     */
    private void roll() throws IOException {
        FileHandle old = current;
        try {
            old.sync();
        } catch (IOException e) {
            failed(e, true);
            throw new IOException("cannot sync log segment " + old.path() + ": " + e.getMessage(), e);
        }
        durableLsn = endLsn;
        syncDone.signalAll();
        Segment next;
        FileHandle file;
        try {
            next = SegmentFiles.create(env, dir, endLsn);
            file = env.open(next.path());
        } catch (IOException e) {
            failed(e, false);
            throw new IOException("cannot create a new log segment in " + dir + ": " + e.getMessage(), e);
        }
        segments.add(next);
        current = file;
        currentBytes = SegmentHeader.SIZE;
        try {
            old.close();
        } catch (IOException e) {
            // The old segment is synced; a failed close loses nothing.
        }
    }

    /**
     * A background sync up to {@code lsn}. A failure needs no report here: it is recorded, and
     * every later append and sync refuses with it; a closed log has synced at close.
     */
    private void syncAhead(long lsn) {
        try {
            syncTo(lsn);
        } catch (IOException | RuntimeException e) {
            // Recorded by failed(), or the log is closed; see above.
        }
    }

    /** See {@link WriteAheadLog#syncTo}. */
    void syncTo(long lsn) throws IOException {
        lock.lock();
        try {
            if (lsn > endLsn) {
                throw new IllegalArgumentException("LSN " + lsn + " is beyond the end of the log " + endLsn);
            }
            if (closed && lsn > durableLsn) {
                throw closedException();
            }
        } finally {
            lock.unlock();
        }
        awaitDurable(lsn);
    }

    /**
     * Group commit: returns once {@code lsn} is durable. A caller finding a sync under way waits for
     * it; the first caller to find none (and its LSN not yet durable) becomes the leader and syncs
     * everything appended so far, on behalf of all callers waiting meanwhile.
     */
    private void awaitDurable(long lsn) throws IOException {
        FileHandle file;
        long target;
        lock.lock();
        try {
            while (true) {
                if (lsn <= durableLsn) {
                    return;
                }
                if (syncFailed) {
                    throw refused();
                }
                if (current == null) {
                    throw closedException();
                }
                if (!syncing) {
                    break;
                }
                syncDone.awaitUninterruptibly();
            }
            syncing = true;
            file = current;
            target = endLsn;
        } finally {
            lock.unlock();
        }
        IOException error = null;
        boolean synced = false;
        try {
            file.sync();
            synced = true;
        } catch (IOException e) {
            error = e;
        } finally {
            lock.lock();
            try {
                syncing = false;
                if (synced) {
                    durableLsn = Math.max(durableLsn, target);
                } else {
                    failed(error != null ? error : new IOException("sync of " + file.path() + " did not complete"),
                            true);
                }
                syncDone.signalAll();
            } finally {
                lock.unlock();
            }
        }
        if (error != null) {
            throw new IOException("cannot sync log segment " + file.path() + ": " + error.getMessage(), error);
        }
    }

    /**
     * When everything in the current segment precedes {@code lsn} (nothing was appended since the
     * checkpoint that passes it) and it holds at least 1 MiB, starts a new segment so the old one
     * can be deleted now rather than once it fills. Lock held.
     */
    private void rollIfObsolete(long lsn) throws IOException {
        Segment last = segments.get(segments.size() - 1);
        if (failure != null || endLsn != lsn || lsn - last.startLsn() < (1L << 20)) {
            return;
        }
        while (syncing) {
            syncDone.awaitUninterruptibly();
        }
        if (failure == null && !closed && endLsn == lsn) {
            roll();
        }
    }

    /** See {@link WriteAheadLog#deleteSegmentsBefore}. */
    void deleteSegmentsBefore(long lsn) throws IOException {
        deletion.lock();
        try {
            List<Segment> doomed = new ArrayList<>();
            lock.lock();
            try {
                if (closed) {
                    throw closedException();
                }
                rollIfObsolete(lsn);
                while (segments.size() > 1 && segments.get(1).startLsn() <= lsn) {
                    doomed.add(segments.remove(0));
                }
            } finally {
                lock.unlock();
            }
            int deleted = 0;
            try {
                for (Segment s : doomed) {
                    env.delete(s.path());
                    env.syncDirectory(dir);
                    deleted++;
                }
            } finally {
                if (deleted < doomed.size()) {
                    lock.lock();
                    try {
                        segments.addAll(0, doomed.subList(deleted, doomed.size()));
                    } finally {
                        lock.unlock();
                    }
                }
            }
        } finally {
            deletion.unlock();
        }
    }

    /**
     * Refuses further appends, syncs what was appended (unless a sync failed before) and closes the
     * last segment. Idempotent.
     */
    void close() throws IOException {
        long target;
        boolean syncNeeded;
        lock.lock();
        try {
            if (closed) {
                return;
            }
            closed = true;
            target = endLsn;
            syncNeeded = !syncFailed && target > durableLsn;
        } finally {
            lock.unlock();
        }
        IOException error = null;
        if (syncNeeded) {
            try {
                awaitDurable(target);
            } catch (IOException e) {
                error = e;
            } catch (BetreeIOException e) {
                // A concurrent sync failed; that failure was reported to its caller.
            }
        }
        lock.lock();
        try {
            while (syncing) {
                syncDone.awaitUninterruptibly();
            }
            try {
                current.close();
            } catch (IOException e) {
                if (error == null) {
                    error = e;
                } else {
                    error.addSuppressed(e);
                }
            }
            current = null;
            syncDone.signalAll();
        } finally {
            lock.unlock();
        }
        if (error != null) {
            throw error;
        }
    }

    /** A buffer with room for a record of {@code size} bytes, positioned at 0. Lock held. */
    private ByteBuffer recordBuffer(int size) {
        if (size > SCRATCH_KEEP_BYTES) {
            return ByteBuffer.allocate(size);
        }
        if (scratch.capacity() < size) {
            scratch = ByteBuffer.allocate(Math.min(SCRATCH_KEEP_BYTES, Math.max(size, scratch.capacity() * 2)));
        }
        return scratch.clear().limit(size);
    }

    /** Records a failure; the first one is what refusals name. Lock held. */
    private void failed(IOException e, boolean sync) {
        if (failure == null) {
            failure = e;
        }
        syncFailed |= sync;
    }

    /** Lock held. */
    private BetreeIOException refused() {
        return new BetreeIOException("write-ahead log " + dir + " refuses writes after an earlier failure"
                + (syncFailed ? " left its state on disk unknown" : "") + "; reopen it to recover", failure);
    }

    private IllegalStateException closedException() {
        return new IllegalStateException("write-ahead log " + dir + " is closed");
    }

    /** Lock held. */
    private void checkAppendable() {
        if (closed) {
            throw closedException();
        }
        if (failure != null) {
            throw refused();
        }
    }
}
